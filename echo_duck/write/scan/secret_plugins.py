r"""The secret detectors: detect-secrets' pattern plugins, and plugins of ours (same interface) for providers
it does not know. Imported on the first scan that needs it (detect-secrets pulls in ``requests``).

Not used from detect-secrets: its keyword and high-entropy plugins (they flag most free text on their own;
secrets.py checks entropy only next to a label word), the public-IP plugin (an address is not a secret),
Artifactory's password pattern (any capitalised word starting "AP" + a hex digit), the legacy OpenAI
pattern (ours below covers the current key formats too), and the npm and JWT plugins, whose patterns backtrack
quadratically on a long line (``//.+/:_authToken``, ``eyJ…+\.…+``; ours below read the same tokens in one pass). Each pattern starts with a literal prefix and has
no nested quantifiers, so a search is one linear pass.
"""

from __future__ import annotations

import re

from detect_secrets.plugins.aws import AWSKeyDetector
from detect_secrets.plugins.azure_storage_key import AzureStorageKeyDetector
from detect_secrets.plugins.base import RegexBasedDetector
from detect_secrets.plugins.basic_auth import BasicAuthDetector
from detect_secrets.plugins.discord import DiscordBotTokenDetector
from detect_secrets.plugins.github_token import GitHubTokenDetector
from detect_secrets.plugins.gitlab_token import GitLabTokenDetector
from detect_secrets.plugins.mailchimp import MailchimpDetector
from detect_secrets.plugins.private_key import PrivateKeyDetector
from detect_secrets.plugins.pypi_token import PypiTokenDetector
from detect_secrets.plugins.sendgrid import SendGridDetector
from detect_secrets.plugins.slack import SlackDetector
from detect_secrets.plugins.square_oauth import SquareOAuthDetector
from detect_secrets.plugins.stripe import StripeDetector
from detect_secrets.plugins.telegram_token import TelegramBotTokenDetector
from detect_secrets.plugins.twilio import TwilioKeyDetector

_END = r"(?![A-Za-z0-9_-])"
_START = r"(?<![A-Za-z0-9_-])"


def _rx(pattern: str, flags: int = 0, *, anywhere: bool = False) -> re.Pattern[str]:
    """A token that starts at a token boundary (so a long run of letters is tried once, not at every position)
    unless ``anywhere`` (distinctive prefixes found glued to a word: "key sk-proj-…" written "keysk-proj-…").
    Every repetition is bounded, so one attempt costs at most a few hundred steps."""
    return re.compile(("" if anywhere else _START) + pattern + _END, flags)


class OpenAIKeyDetector(RegexBasedDetector):
    secret_type = "OpenAI API key"
    denylist = (_rx(r"sk-(?:proj|svcacct|admin|None)-[A-Za-z0-9_-]{20,512}", anywhere=True),
                _rx(r"sk-(?=[A-Za-z0-9_-]{0,60}\d)[A-Za-z0-9_-]{20,512}"))


class AnthropicKeyDetector(RegexBasedDetector):
    secret_type = "Anthropic API key"
    denylist = (_rx(r"sk-ant-(?:api|admin|sid)\d{2}-[A-Za-z0-9_-]{20,512}", anywhere=True),)


class GoogleKeyDetector(RegexBasedDetector):
    secret_type = "Google API key"
    denylist = (_rx(r"AIza[0-9A-Za-z_-]{35}"), _rx(r"ya29\.[0-9A-Za-z_-]{20,512}"), _rx(r"GOCSPX-[0-9A-Za-z_-]{20,512}"))


class ProviderTokenDetector(RegexBasedDetector):
    """Tokens with a registered prefix (the prefix is the provider's own, so the match is precise)."""

    secret_type = "provider access token"
    denylist = (
        _rx(r"hf_[A-Za-z0-9]{30,512}"),                          # Hugging Face
        _rx(r"shp(?:at|ss|ca|pa)_[a-fA-F0-9]{32}"),            # Shopify
        _rx(r"figd_[A-Za-z0-9_-]{30,512}"),                      # Figma
        _rx(r"ATATT3[A-Za-z0-9_=-]{50,512}"),                    # Atlassian
        _rx(r"do[opr]_v1_[a-f0-9]{64}"),                      # DigitalOcean
        _rx(r"HRKU-[A-Za-z0-9_-]{30,512}"),                      # Heroku
        _rx(r"dapi[a-f0-9]{32}(?:-\d)?"),                     # Databricks
        _rx(r"dp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,512}"),  # Doppler
        _rx(r"lin_(?:api|oauth)_[A-Za-z0-9]{40}"),            # Linear
        _rx(r"(?:secret|ntn)_[A-Za-z0-9]{43,512}"),              # Notion
        _rx(r"PMAK-[a-f0-9]{24}-[a-f0-9]{34}"),               # Postman
        _rx(r"pul-[a-f0-9]{40}"),                             # Pulumi
        _rx(r"sbp_[a-f0-9]{40}"),                             # Supabase
        _rx(r"gl(?:sa|c)_[A-Za-z0-9_+/=-]{32,512}"),             # Grafana
        _rx(r"NRAK-[A-Z0-9]{27}"),                            # New Relic
        _rx(r"key-[a-f0-9]{32}"),                             # Mailgun
        _rx(r"pscale_(?:tkn|pw|oauth)_[A-Za-z0-9_.-]{32,512}"),  # PlanetScale
        _rx(r"AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}"),  # age
        _rx(r"glpat-[A-Za-z0-9_-]{20,512}"),                     # GitLab personal token, any length
        _rx(r"github_pat_[A-Za-z0-9_]{22,512}"),                 # GitHub fine-grained token
        _rx(r"gh[pousr]_[A-Za-z0-9]{30,512}"),                   # GitHub, any length
        _rx(r"xox[abposre]-[A-Za-z0-9-]{10,512}"),               # Slack, newer shapes
        _rx(r"(?:sk|rk)_(?:live|test)_[0-9A-Za-z]{16,512}"),     # Stripe, shorter keys
        _rx(r"SG\.[A-Za-z0-9_-]{16,512}\.[A-Za-z0-9_-]{16,512}"),   # SendGrid, any length
        _rx(r"(?:AC|SK)[a-f0-9]{32}"),                      # Twilio account sid / key
        _rx(r"npm_[A-Za-z0-9]{36}"),                          # npm
        re.compile(r"//[^\s/]{1,200}/:_authToken=\s*([A-Fa-f0-9-]{36}|npm_[A-Za-z0-9]{36})"),  # .npmrc line
        _rx(r"pypi-AgE[A-Za-z0-9_-]{50,512}"),                   # PyPI
        _rx(r"vercel_[A-Za-z0-9]{24,512}"),                      # Vercel
        _rx(r"dckr_pat_[A-Za-z0-9_-]{20,512}"),                  # Docker Hub
        _rx(r"rubygems_[a-f0-9]{48}"),                        # RubyGems
        _rx(r"[A-Za-z0-9_-]{3}8Q~[A-Za-z0-9_.~-]{31,34}"),    # Azure AD client secret
    )


class JwtDetector(RegexBasedDetector):
    """JSON web tokens (header.payload.signature). detect-secrets' pattern backtracks quadratically on "eyJeyJ…"."""

    secret_type = "JSON Web Token"
    denylist = (_rx(r"eyJ[A-Za-z0-9_-]{8,2048}\.eyJ[A-Za-z0-9_-]{8,8192}\.[A-Za-z0-9_-]{8,2048}"),)


class ConnectionStringDetector(RegexBasedDetector):
    """A password inside a connection string (AccountKey=…, Password=…;) or a URL's user:password@."""

    secret_type = "connection-string password"
    denylist = (
        re.compile(r"(?i)(?:AccountKey|SharedAccessKey)=([^;\s'\"]{8,512})"),
        re.compile(r"(?i)(?:^|;)\s*(?:Password|Pwd)\s*=\s*([^;\s'\"]{6,512})(?=;)"),  # Server=…;Password=…;
        re.compile(r"[a-z][a-z0-9+.-]{1,20}://[^\s:/@'\"]{0,64}:([^\s:/@'\"]{6,128})@"),
        re.compile(r"https://[a-f0-9]{32}@[\w.-]+\.ingest(?:\.[a-z]{2})?\.sentry\.io"),  # Sentry DSN
    )


PLUGINS: tuple[RegexBasedDetector, ...] = tuple(cls() for cls in (
    PrivateKeyDetector, AWSKeyDetector, AzureStorageKeyDetector, BasicAuthDetector, DiscordBotTokenDetector,
    GitHubTokenDetector, GitLabTokenDetector, MailchimpDetector, PypiTokenDetector,
    SendGridDetector, SlackDetector, SquareOAuthDetector, StripeDetector, TelegramBotTokenDetector, TwilioKeyDetector,
    OpenAIKeyDetector, AnthropicKeyDetector, GoogleKeyDetector, ProviderTokenDetector, JwtDetector, ConnectionStringDetector,
))
