"""Contradiction verification: the deterministic heuristic (EN and ZH) and the LLM adapter."""

from __future__ import annotations

import json
from dataclasses import dataclass

import pytest

from echo_duck.lifecycle.verify import Verdict, heuristic_verifier, llm_verifier


@dataclass(frozen=True)
class Mem:
    content: str
    key: str | None = None
    type: str = "user"


def verdict(a: str, b: str, **kw) -> Verdict:
    return heuristic_verifier(Mem(a, **kw), Mem(b, **kw))


# (a, b, minimum confidence of the contradiction)
CONTRADICTIONS = [
    ("The project uses npm", "The project uses pnpm", 0.8),  # the example
    ("用户偏好中文", "用户偏好英文", 0.8),  # the example
    ("用户偏好中文回答", "用户偏好英文回答", 0.8),
    ("uses npm", "does not use npm", 0.8),
    ("The project doesn't use Docker", "The project uses Docker", 0.8),
    ("I no longer use npm", "I use npm", 0.8),
    ("User likes coffee", "User dislikes coffee", 0.8),
    ("User likes coffee", "User hates coffee", 0.8),
    ("Always answer in Chinese", "Never answer in Chinese", 0.8),
    ("User prefers pnpm", "User avoids pnpm", 0.8),
    ("用户喜欢咖啡", "用户不喜欢咖啡", 0.8),
    ("用户喜欢咖啡", "用户讨厌咖啡", 0.8),
    ("要用pnpm", "不要用pnpm", 0.8),
    ("用户使用npm", "用户不使用npm", 0.8),
    ("用户用npm", "用户从不用npm", 0.8),
    ("Dark mode is enabled", "Dark mode is disabled", 0.8),
    ("The API runs on port 8080", "The API runs on port 9090", 0.75),
    ("The project uses Python 3.11", "The project uses Python 3.12", 0.75),
    ("The staging server is at 10.0.0.5", "The staging server is at 10.0.0.6", 0.75),
    ("用户的生日是5月3日", "用户的生日是6月3日", 0.75),
    ("用户住在上海", "用户住在北京", 0.6),
    ("User's name is Ethan", "User's name is Bob", 0.6),
    ("The project uses npm", "The project uses pnpm 9 with workspaces", 0.8),
    ("User prefers pnpm over npm", "User prefers npm over pnpm", 0.75),
    ("User prefers tabs", "User prefers spaces", 0.8),
    ("以后回复都用英文", "以后回复都用中文", 0.8),
    ("Deploys happen on Friday", "Deploys happen on Monday", 0.8),
    ("Always answer in Chinese", "User prefers answers in English", 0.8),
    ("User owns a car", "User does not own a car", 0.8),
    ("用户是程序员", "用户不是程序员", 0.8),
    ("用户没有养猫", "用户养猫", 0.8),
    ("The project requires Node 18", "The project requires Node 20", 0.75),
    ("The meeting lasts an hour", "The meeting lasts 30 minutes", 0.75),
    ("The user's son is 8 years old", "The user's son is 10 years old", 0.75),
    ("The office is on the 3rd floor", "The office is on the 5th floor", 0.75),
    # amounts written in other ways (verify_parse._normalise): Chinese numerals, dates, temperatures, rates
    ("The freezer is kept at -18 °C", "The freezer is kept at 10 °F", 0.75),
    ("用户的儿子上二年级", "用户的儿子上四年级", 0.75),
    ("The launch is on 4 May", "The launch is on May 9", 0.75),
    ("发布会定在 9 月 1 日", "发布会定在九月十号", 0.75),
    ("The user walks 3 km a day", "The user walks 8 km a day", 0.75),
    ("Since 2022 the user has lived in Lyon", "The user lives in Nice now", 0.6),
    # verify_rules: compounds built from opposites, a denial in another word order
    ("The sofa is left-facing", "The sofa is right-facing", 0.8),
    ("小区的房价在变高", "小区的房价在变低", 0.8),
    ("The nightly report includes refunds", "Refunds are not included in the nightly report", 0.8),
    ("The user gave up sugar in tea last spring", "The user takes sugar in tea", 0.6),  # stopped vs done now
    ("用户去年就戒掉了奶茶", "用户每天下午都喝奶茶", 0.75),
    ("The user prefers trains for long trips", "The user prefers cars for long trips", 0.6),  # one choice
    # Not detected, by design: "Node 18 is required" has its number before the predicate, where
    # "Server 18 is down" vs "Server 20 is down" name two subjects; the heuristic reads both as subjects.
]


@pytest.mark.parametrize("a,b,minimum", CONTRADICTIONS, ids=[f"{a} | {b}" for a, b, _ in CONTRADICTIONS])
def test_contradiction(a, b, minimum):
    v = verdict(a, b)
    assert v.contradicts, v
    assert minimum <= v.confidence <= 1, v
    assert verdict(b, a).contradicts  # symmetric


# (a, b, minimum confidence that they do NOT contradict)
COMPATIBLE = [
    ("The project uses pnpm", "The project uses pnpm", 0.9),
    ("The project uses pnpm", "the project uses pnpm.", 0.9),
    ("User prefers pnpm over npm", "User prefers pnpm, not npm", 0.9),
    ("Always run tests before committing", "Always run the tests before you commit", 0.9),
    ("The project uses pnpm", "The project uses pnpm 9 with workspaces", 0.6),  # additive detail: a refinement
    ("The project uses Python 3.11", "The project uses Python 3.11.4", 0.6),  # a finer version
    ("User prefers pnpm", "User likes pnpm best", 0.6),  # paraphrase
    ("The user is called Ethan", "The user's name is Ethan", 0.6),
    ("User lives in Berlin", "User works in Berlin", 0.6),  # another relation, not another value
    ("User likes coffee", "User likes tea", 0.5),  # liking is not exclusive
    ("User speaks English", "User speaks Chinese", 0.5),
    ("用户喜欢咖啡", "用户喜欢茶", 0.5),
    ("User likes coffee", "User dislikes tea", 0.5),
    ("The project uses npm", "The project does not use pnpm", 0.5),
    ("以后不要用韩语", "以后回复都用英文", 0.5),
    ("User lives in Berlin", "User likes tea", 0.8),  # unrelated
    ("The project uses pnpm", "用户喜欢咖啡", 0.8),
    ("The project uses npm for builds", "The project uses docker for deploys", 0.5),
    ("Never push to main", "Always answer in Chinese", 0.7),
    ("用户偏好中文回答", "用户住在上海", 0.8),
    ("User is located in Berlin", "User lives in Berlin", 0.6),
    ("用户不同意这个方案", "用户不同意那个方案", 0.5),  # both negated: the same statement
    # The audit's floods: templated facts about different subjects, numbered notes (issue 20).
    ("The auth service listens on port 8001", "The billing service listens on port 8002", 0.7),
    ("The X service listens on port 8001", "The Y service listens on port 8003", 0.7),
    ("fact 1", "fact 2", 0.7),
    ("Environment fact number 3", "Environment fact number 7", 0.7),
    ("Note 3: check the logs", "Note 4: check the logs", 0.7),
    ("Server A has 16 GB RAM", "Server B has 32 GB RAM", 0.7),
    ("The meeting lasts an hour", "The meeting lasts 60 minutes", 0.7),  # one quantity, two units
    ("The cache TTL is 5 minutes", "The session timeout is 30 minutes", 0.7),
    ("The user is learning Spanish", "The user speaks French", 0.6),
    ("The user has two cats", "The user has a dog", 0.5),
    ("The user drinks coffee at work", "The user drinks tea at home", 0.6),  # different situations
    ("The user lived in Paris in 2019", "The user lives in Berlin now", 0.7),  # different times
    ("The team has 5 engineers", "The team has 2 designers", 0.6),
    ("The pool is heated to 28 °C", "The pool is heated to 82.4 °F", 0.7),  # one temperature, two scales
    ("用户的女儿身高一米二", "用户的女儿身高 120 厘米", 0.7),
    ("午休一个半小时", "午休 90 分钟", 0.7),
    ("The user walks 3 km a day", "The user walks 3000 m a day", 0.7),  # "a day" is a rate, not one day
    ("The launch is on 4 May", "The launch is on May 4", 0.7),
    # verify_rules: negation scoped to its clause; one slot per comparison
    ("The user is a runner", "The user doesn't own a car; they're a runner", 0.6),
    ("The user's horse is called Clover", "The user's horse is scared of traffic", 0.5),
    ("用户最喜欢看电影", "用户最喜欢的导演是王家卫", 0.5),
    ("The user edits in Emacs over SSH", "The user edits in Sublime on the desktop", 0.5),
    ("The user gave up sugar in tea last spring", "The user used to take sugar in tea", 0.5),
    ("The user quit cycling", "The user walks to work every day", 0.5),
]


@pytest.mark.parametrize("a,b,minimum", COMPATIBLE, ids=[f"{a} | {b}" for a, b, _ in COMPATIBLE])
def test_not_a_contradiction(a, b, minimum):
    v = verdict(a, b)
    assert not v.contradicts, v
    assert minimum <= v.confidence <= 1, v
    assert not verdict(b, a).contradicts


def test_descriptions_say_what_differs():
    assert verdict("The project uses npm", "The project uses pnpm").description == \
        "package manager 'npm' vs 'pnpm' under the same subject ('use')"
    assert "'中文' vs '英文'" in verdict("用户偏好中文", "用户偏好英文").description
    assert verdict("uses npm", "does not use npm").description.startswith("negation: one says 'use npm'")
    assert "'8080' vs '9090'" in verdict("The API listens on port 8080", "The API listens on port 9090").description
    assert "adds detail ('9 workspace')" in verdict("uses pnpm", "uses pnpm 9 with workspaces").description
    assert "unrelated" in verdict("User lives in Berlin", "User likes tea").description


def test_same_key_and_different_value_is_a_confident_contradiction():
    plain = verdict("User's name is Ethan", "User's name is Bob")
    keyed = verdict("User's name is Ethan", "User's name is Bob", key="identity:name")
    assert keyed.contradicts and keyed.confidence >= 0.8 > plain.confidence
    assert "same key" in keyed.description


def test_same_key_even_with_few_shared_words():
    v = verdict("User prefers pnpm over npm", "User likes yarn", key="preference:package_manager")
    assert v.contradicts and v.confidence >= 0.8 and "'pnpm' vs 'yarn'" in v.description
    v = verdict("User's name is Ethan", "User goes by Bob", key="identity:name")
    assert v.contradicts and v.confidence >= 0.75


def test_same_key_paraphrase_or_refinement_is_not_a_contradiction():
    assert not verdict("User prefers pnpm", "User likes pnpm best", key="preference:package_manager").contradicts
    assert not verdict("uses pnpm", "uses pnpm 9 with workspaces", key="tool:package_manager").contradicts


@pytest.mark.parametrize("key", ["reply_language", None])
def test_the_same_fact_said_in_the_other_language_is_no_contradiction(key):
    # a bilingual user restating a fact: 'chinese' vs '中文' is one language, 'berlin' vs '柏林' one city
    for a, b in [("User prefers answers in Chinese", "用户希望用中文回答"), ("The standup is on Monday", "站会在星期一"),
                 ("User lives in Berlin", "用户住在柏林")]:
        assert not verdict(a, b, key=key).contradicts, (a, b)
    # a name in each script: under one key a restatement; without one, the same or another (a rival's claim): review
    for a, b in [("User's manager is Alice Chen", "User's manager is 王伟"), ("用户住在上海", "用户住在Berlin"),
                 ("The user lives in Berlin", "The user lives in 上海")]:  # English words in it are no names
        v = verdict(a, b, key=key)
        assert (not v.contradicts) if key else (v.contradicts and 0.5 <= v.confidence < 0.75), (a, b, v)
    # two members of a closed class that do not translate each other still conflict
    assert verdict("User prefers answers in English", "用户希望用中文回答", key="reply_language").contradicts
    assert verdict("The standup is on Monday", "站会在周三", key="standup").contradicts


def test_same_key_makes_non_exclusive_values_conflict():
    # extract keys likes by their object, so a shared key means one slot: "favourite drink"
    assert verdict("User likes coffee", "User likes tea", key="preference:favourite_drink").contradicts


def test_different_keys_and_types_lower_the_confidence():
    same = heuristic_verifier(Mem("Always use pnpm", "rule:package_manager", "procedure"),
                              Mem("Always use npm", "rule:package_manager", "procedure"))
    apart = heuristic_verifier(Mem("Always use pnpm", "rule:package_manager", "procedure"),
                               Mem("The project uses npm", "tool:package_manager", "environment"))
    assert same.contradicts and apart.contradicts
    assert apart.confidence < 0.75 <= same.confidence
    assert "keys differ" in apart.description and "types differ" in apart.description


def test_memories_without_content_words():
    assert not verdict("the", "a").contradicts
    assert not verdict("", "").contradicts


def test_any_object_with_content_key_type_works():
    class Row:
        def __init__(self, content):
            self.content, self.key, self.type = content, None, "environment"

    assert heuristic_verifier(Row("The API runs on port 8080"), Row("The API runs on port 9090")).contradicts


def test_verdict_is_deterministic_and_rounded():
    a, b = Mem("用户住在上海"), Mem("用户住在北京")
    assert heuristic_verifier(a, b) == heuristic_verifier(a, b)
    assert heuristic_verifier(a, b).confidence == round(heuristic_verifier(a, b).confidence, 2)


# -- the LLM adapter ------------------------------------------------------------------------------------
A, B = Mem("The project uses npm", "tool:package_manager", "environment"), Mem("The project uses pnpm")


def ask(answer) -> Verdict:
    return llm_verifier(lambda prompt: answer)(A, B)


def test_llm_verdict_is_used():
    v = ask('{"contradicts": true, "confidence": 0.93, "description": "npm vs pnpm"}')
    assert v == Verdict(True, 0.93, "npm vs pnpm")


@pytest.mark.parametrize("answer", [
    '```json\n{"contradicts": false, "confidence": 0.7, "description": "compatible"}\n```',
    'Sure! Here is my verdict: {"contradicts": false, "confidence": 0.7, "description": "compatible",} Hope it helps.',
    "{'x': 1} then {\"contradicts\": \"no\", \"confidence\": \"0.7\", \"description\": \"compatible\"}",
    '{"contradicts": False, "confidence": 0.7, "description": "compatible"}',
])
def test_llm_verdict_is_parsed_tolerantly(answer):
    assert ask(answer) == Verdict(False, 0.7, "compatible")


def test_llm_confidence_is_clamped_and_defaults():
    assert ask('{"contradicts": true, "confidence": 3}').confidence == 1.0
    v = ask('{"contradicts": 1}')
    assert v == Verdict(True, 0.5, "contradiction")


@pytest.mark.parametrize("answer", ["I think they conflict.", '{"confidence": 0.9}', '{"contradicts": "maybe"}', None])
def test_llm_unusable_answer_falls_back_to_heuristic(answer):
    v = ask(answer)
    expected = heuristic_verifier(A, B)
    assert (v.contradicts, v.confidence) == (expected.contradicts, expected.confidence)
    assert v.description == f"LLM unavailable, heuristic: {expected.description}"


def test_llm_exception_uses_the_given_fallback():
    def broken(prompt):
        raise ConnectionError("no network")

    calls = []

    def fallback(a, b):
        calls.append((a, b))
        return Verdict(False, 0.1, "custom")

    v = llm_verifier(broken, fallback=fallback)(A, B)
    assert calls == [(A, B)] and v == Verdict(False, 0.1, "LLM unavailable, heuristic: custom")


def test_llm_prompt_carries_both_memories():
    prompts = []
    llm_verifier(lambda p: prompts.append(p) or '{"contradicts": false}')(Mem("偏好中文", "rule:reply_language"), Mem('say "hi"'))
    assert json.dumps("偏好中文", ensure_ascii=False) in prompts[0] and json.dumps('say "hi"') in prompts[0]
    assert "rule:reply_language" in prompts[0] and '"contradicts"' in prompts[0]


def test_llm_verifier_has_a_name_for_the_audit_log():
    assert llm_verifier(lambda p: "").__name__ == "llm_verifier"


def test_long_memories_are_judged_on_their_head_with_a_short_description():
    v = verdict("x " * 5000 + "port 8080", "y x " * 5000 + "port 9090")
    assert len(v.description) < 250
