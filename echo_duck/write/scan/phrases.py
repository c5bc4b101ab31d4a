"""The prompt-injection phrase rules, in English and Chinese: the first layer, and the least trusted.

Tables of verbs, targets and fillers combined into a few compiled patterns. Each rule needs two things
together (a verb AND its target) so that notes which merely say "ignore", "system" or "你现在" pass.
Patterns read the folded view (normalise.fold). They fit the fixture corpus better than they describe
the attack, so a match alone only quarantines a write; it is blocked when the classifier agrees.
"""

from __future__ import annotations

import re

from .leading import leading


def _rx(*parts: str) -> re.Pattern[str]:
    return re.compile("|".join(f"(?:{p})" for p in parts))


def _word_rx(*parts: str) -> re.Pattern[str]:
    """_rx of rules that each start a word: the engine tries them only where a word starts (half the time on 100,000
    characters of prose, where it would try every rule at every character)."""
    assert all(p.startswith(r"\b") for p in parts)
    return re.compile(r"(?=\b\w)(?:" + "|".join(f"(?:{p})" for p in parts) + ")")


# "do not ignore previous instructions" is advice: a match right after one of these is skipped ("why not ignore…" is
# not). Checked after the match rather than as a lookbehind, which would slow the search at every position.
_NEGATED_RE = re.compile(r"\b(?:(?:do|does|must|should|will|would|can|may) not|don t|dont|doesn t|never|cannot|can t|won t|"
                         r"shouldn t|mustn t) $")
_VERB = (r"ignore|disregard|forget|forgo|bypass|circumvent|discard|abandon|neglect|set aside|put aside|throw out|disobey|"
         r"pay no attention to|(?:do not|don t|dont|no longer|stop) (?:follow(?:ing)?|obey(?:ing)?)")
_FILL = r"all|any|every|each|of|the|your|these|those|its|their|other|such|and|or"
_TEMP = r"previous|previously|prior|preceding|above|earlier|former|foregoing|aforementioned|system|developer|safety|ethical"
# Not "messages", "prompts", "orders", "context": "ignore the previous message, I meant staging" is an ordinary note.
_OBJ = r"instructions?|directives?|directions|guidelines?|rules|restrictions|guardrails|safeguards|programming|ethics"
_YOU = r"you are|you re|youre|you will be|you ll be|you have (?:now )?become|henceforth you are"
_NOW = (rf"(?:you are|you re|youre) now|from (?:now on|here on|this point(?: forward| on)?) (?:{_YOU})|you have (?:now )?become|"
        r"you will now be|henceforth you are|from now on (?:you (?:will|shall|must) )?(?:act|behave|respond|answer|speak) (?:as|like)")
_NO_LIMITS = r"restrictions|rules|guidelines|limits|constraints|filters|policies|ethics|morals|censorship|boundaries"
_JAILBROKEN = (rf"dan|do anything now|free (?:ai|assistant|model|bot)|jailbroken|unrestricted|unfiltered|uncensored|unchained|"
               rf"amoral|unaligned|evil (?:ai|assistant|model|bot|twin|persona)|no longer (?:bound|restricted|limited|an? ai|an? assistant|"
               rf"chatgpt|claude|gpt|required to follow)|(?:free (?:from|of)|not bound by|without) (?:all |any |your )?"
               rf"(?:{_NO_LIMITS})|in (?:dan|jailbreak|jailbroken|unrestricted|unfiltered|uncensored|evil|chaos) mode|"
               rf"an? (?:\w+ )?(?:ai|assistant|model|chatbot|bot|llm) (?:with no|without(?: any)?) (?:{_NO_LIMITS})")
# "you are now <role>" needs a persona noun: "you are now able to deploy / an admin on staging" are facts.
_ROLE = r"assistant|ai|chatbot|bot|model|persona|character|hacker|pirate|villain|language model|gpt|llm|entity|genie|slave|servant"
_USER = r"(?:the|your) (?:user|human|operator|owner)s?\b(?! (?:to|s)\b)"  # "don't tell the user to reinstall" is advice
_SYS_NOUN = r"flag|option|setting|parameter|param|env|variable|feature|field|config|test|file|support|hook|function|method|api|argument"

_EN_WORDS = _word_rx(
    # ignore / disregard / forget … previous … instructions, and the same aimed at "your" rules or the system prompt
    rf"\b(?:{_VERB}) (?:(?:{_FILL}) ){{0,4}}(?:{_TEMP}) (?:(?:{_FILL}|{_TEMP}|subsequent|later|future|s) ){{0,3}}(?:{_OBJ})\b",
    r"\boverride (?:all |the |any )?(?:previous|prior|earlier|above|preceding|system) (?:instructions|directives|guidelines|prompts|"
    r"programming)\b",
    rf"\b(?:{_VERB}|override|drop|reset|clear|erase|wipe) (?:all |any )?(?:of )?your (?:(?:{_TEMP}|own|current|core|built in|"
    rf"internal) ){{0,2}}(?:{_OBJ}|system prompt)\b",
    rf"\b(?:{_VERB}) (?:all|any) (?:of )?(?:the )?(?:(?:previous|prior|earlier) )?(?:instructions|directives|guidelines|"
    r"guardrails|restrictions|safeguards|prompts)\b",
    rf"\b(?:{_VERB}) (?:all |every |of |the |these |those |any |previous |prior ){{0,3}}(?:{_OBJ}|guidance|prompts|messages|context) "
    r"(?:you (?:have |ve |had )?(?:received|been given|were given|got|were told|were taught)|(?:given|provided|written|stated) (?:to you|"
    r"earlier|before|previously|above)|above|before this|so far|until now|(?:in|from|of|by) (?:your|the) (?:system|developer) (?:prompt|"
    r"message)|(?:from|by|of) (?:your|the) (?:developers?|creators?|makers?|openai|anthropic))\b",
    rf"\b(?:{_VERB}) (?:the |your )?(?:system|developer) (?:prompt|message)s?(?= (?:and|then|entirely|completely|now)\b| \||$)",
    rf"\b(?:{_VERB}) (?:all )?(?:of )?(?:the )?above(?: (?:and|then|instead)\b| \||$)",
    rf"\b(?:{_VERB}) (?:about )?(?:everything|all|anything) (?:that )?(?:you (?:were|have been|ve been|had been|got) "
    r"(?:told|taught|given|instructed|programmed)|(?:was )?(?:said|written|stated) (?:above|before|earlier|previously)|above|"
    r"before this|previously|so far|up to (?:now|this point)|(?:that )?came before)\b",
    rf"\b(?:{_VERB}) (?:what|whatever|everything|anything) (?:the system|your (?:developers?|creators?|instructions|system prompt)|"
    r"the developers?|openai|anthropic|you (?:were|have been)) (?:told|said|says|say|instructed|taught)",
    r"\b(?:override|disable|turn off|deactivate|bypass|ignore|skip) (?:(?:all|any|your) ){1,2}(?:safety|ethical|content|moral) "
    r"(?:protocols|guidelines|guardrails|filters|restrictions|rules|policies|measures|checks)\b",
    r"\b(?:reply|respond|answer|speak|write) (?:now )?without (?:any )?(?:filters?|restrictions?|censorship|limits|safety)\b",
    # … are void / no longer apply / the real instructions follow
    rf"\b(?:previous|prior|above|earlier|original|preceding) (?:{_OBJ}|system (?:prompt|message)) (?:are|is|have been|has been) "
    r"(?:now )?(?:null and )?(?:void|null|cancelled|canceled|revoked|overridden|overruled|suspended|lifted|rescinded)\b",
    rf"\b(?:your|all) (?:(?:previous|prior|original|earlier|old|current) )?(?:{_OBJ}) (?:no longer apply|do not apply|don t apply|"
    r"are no longer (?:valid|in effect|active))\b",
    rf"\b(?:{_OBJ}) (?:above|before this) (?:are|is|were) (?:fake|void|null|not real|a test|a trick|invalid|cancelled|revoked)\b",
    r"\byour (?:guidelines|instructions|rules|system prompt|directives|programming) (?:have|has) been (?:updated|changed|replaced|revised|"
    r"lifted|removed)\b",
    r"\b(?:real|actual|true) (?:instructions|rules|directives|task) (?:follow(?= \||$)|are below|are as follows|begin here)",
    r"\byou (?:must|will|shall) (?:now )?(?:only )?obey (?:only )?(?:me|us|this|these|the following)\b|"
    r"\b(?:never|do not|don t|dont) (?:ever )?refuse (?:a|any) (?:request|question|instruction)",
    # role reassignment and jailbreak personas
    rf"\b(?:{_YOU}|act as|acting as|pretend (?:to be|you are|that you are)|role ?play as|play the role of|respond as|"
    rf"answer as|reply as|speak as|behave as) (?:now )?(?:called |named |known as )?(?:an? )?(?:{_JAILBROKEN})\b",
    rf"\b(?:{_NOW}) (?:(?:an?|the|my|our|your new) (?:\w+ ){{0,3}}?(?:{_ROLE})|called|named|known as|no longer)\b",
    r"\byour (?:new|real|true|actual) (?:role|persona|identity|instructions|directives?|purpose|programming|prime directive|"
    r"system prompt) (?:is|are|will be)\b",
    r"\b(?:dan|jailbreak|jailbroken|unrestricted|unfiltered|uncensored) mode\b|\bdo anything now\b|"
    r"\ban? (?:ai|assistant|model|chatbot|bot) that (?:never refuses|always complies|has no (?:rules|restrictions|limits|filters))\b",
    r"\bthis (?:memory|note|message|instruction|text|entry) (?:supersedes|overrides|replaces|takes precedence over|cancels) (?:all |any |"
    r"your )?(?:(?:previous|prior|other|system|existing|earlier) )*(?:instructions|directives|system prompt|rules|guidelines|prompts)\b|"
    r"\b(?:treat|consider|regard) this (?:memory|note|message|text|entry) as (?:your |a |the )?(?:(?:new|highest|top|primary|priority) )*"
    r"(?:system )?(?:instruction|prompt|directive|rule)s?\b",
    r"\byour (?:prime|top|highest|only|primary) (?:directive|instruction) (?:is|now is)\b",
    # system prompt override / disclosure
    rf"\bsystem prompt override\b(?! (?:{_SYS_NOUN})s?\b)|"
    r"\b(?:system|admin|developer|root) override (?:enabled|activated|engaged|accepted|granted|mode|code|protocol)\b",
    r"\b(?:reveal|show|print|repeat|output|display|leak|disclose|expose|dump|tell|give|send|write out|spell out|recite|copy|paste) "
    r"(?:me |us )?"
    r"(?:all of |the (?:contents?|text) of )?(?:your|the (?:hidden|secret)) (?:(?:full|entire|complete|exact|original|initial|"
    r"hidden|secret|internal|own) )*(?:system (?:prompt|instructions|message)|prompt|instructions|initial prompt|pre prompt|"
    r"guidelines|directives|rules)\b",
    r"\b(?:reveal|print|repeat|output|show|tell me|recite|copy|paste) (?:me )?(?:all )?the (?:instructions|rules|prompt|text) "
    r"you (?:were|have been) given\b",
    r"\bwhat (?:is|are|s|were) your (?:system prompt|initial prompt|original instructions|hidden instructions|system instructions)\b",
    r"\brepeat (?:back )?(?:everything|all|the (?:text|words|prompt|instructions)) (?:above|before this)\b",
    # hiding things from the user
    rf"\b(?:do not|don t|dont|never|must not|mustn t|should not|shouldn t) (?:ever )?(?:tell|inform|(?:mention|reveal|disclose|"
    rf"report)(?: this(?: \w+)?| it| that| anything| these)? to) {_USER}",
    r"\bkeep (?:the|your) (?:user|human|operator)s? in the dark\b",
    r"\b(?:hide|conceal) (?:this|these) (?:instructions?|messages?|memory|memories|notes?|rules?|prompts?) from (?:the|your) "
    r"(?:user|human)",
    r"\b(?:do not|don t|dont|never) let (?:the|your) (?:user|human|operator|owner)s? (?:know|find out|notice|learn|discover)\b",
    r"\b(?:keep (?:this|it|that|these) (?:secret|hidden|confidential)|conceal (?:this|it|that|these)) from (?:the|your) "
    r"(?:user|human|operator|owner)",
)
# A spaced-out or glued phrase ("I G N O R E  A L L…", "ignoreallpreviousinstructions") becomes one long token.
_EN_GLUED = re.compile(
    r"(?:ignore|disregard|forget|bypass)(?:all|any|every)?(?:of)?(?:the|your|these|those)?(?:previous|prior|preceding|above|earlier|"
    r"former|system)(?:instructions?|directives?|guidelines|prompts?|rules)|(?:ignore|disregard|forget)(?:all)?(?:of)?your(?:instructions|"
    r"rules|guidelines|directives|programming)|forget(?:about)?everything(?:that)?you(?:were|havebeen|vebeen)(?:told|taught|given)|"
    r"(?:donot|dont|never)(?:ever)?tell(?:the|your)user(?!s?to)|systempromptoverride|reveal(?:your|the)systemprompt|"
    r"youarenow(?:dan|jailbroken|unrestricted)|doanythingnow")
# Punctuation matters here, so these read the folded text: "new system prompt:" vs "the new system prompt is in v2.md".
_MARKUP_TAGGED = (  # each starts with a word or a sign it can be found by
    r"\b(?:new|updated|real|actual|true|secret|hidden)\s+system\s+(?:prompt|instructions?|message)\s*[:=]|新的?系统提示词?\s*[:=]",
    r"\b(?:real|actual|true|secret|hidden)\s+(?:instructions|prompt|directives)\s*[:=]",
    r"<\|im_start\|>\s*system|<\|start_header_id\|>\s*system|<<sys>>",
)
# at the start of a line, or after a lead-in ("Remember that SYSTEM: …", "FYI ### System: …", "记住：system: …")
_MARKUP_ROLE = (r"(?:^|\n|[:：,，]|\b(?:that|fyi|btw|so|also|note|reminder|important|ps)\b)\s*(?:#{1,3}\s*)?[\[<(]?"
                r"(?:system|sys|admin|developer)[\])>]?\s*:\s*(?:you\s|ignore|disregard|forget|from now on|new\s|override)")
_EN_MARKUP = _rx(*_MARKUP_TAGGED, _MARKUP_ROLE)
# A text without a role word cannot match the last rule; without it the rules say where they can start (leading.py),
# which a lead-in that may be a line start or a comma hides: the same first match, a fraction of the cost.
_EN_MARKUP_TAGGED = leading(_rx(*_MARKUP_TAGGED))
_ROLE_WORDS = ("sys", "admin", "developer")

# Chinese rules read the squashed view (no spaces or punctuation), where "忽 略-之前" is "忽略之前".
_ZH_NO = r"(?<!我)(?<!们)(?<!他)(?<!她)(?<!不要)(?<!别)(?<!不能)(?<!不可)"  # "我忘记之前的设定了" is not an order
_ZH_VERB = (r"忽略|忽视|无视|不要理会|不用理会|别理会|不理会|不要管|别管|抛开|抛弃|丢弃|放弃|绕过|违背|忘记|忘掉|忘了|"
            r"(?:不要|不再|不用|停止|不必)(?:遵守|遵循)|"
            r"唔好理会?|唔使理会?|唔驶理|唔洗理|唔理|咪理|(?:唔好|唔使|唔驶|唔洗)再?(?:跟|听|遵守|理)")  # Cantonese
_ZH_REQ = r"之前|以前|先前|此前|前面|上面|以上|上述|上文|前述|刚才|原来|原先|原有|原本|早先|最初|初始|所有|全部|一切|你|您|系统"
_ZH_FILL = rf"{_ZH_REQ}|的|嘅|啲|呢啲|嗰啲|晒|些|这些|那些|任何|其他|给你|对你|收到|接收到|被|设置|中|里|所|过|了|掉|一下|对话|开发者|官方|安全|内置|预设|既定|现有|说|说过|讲过|提到|提过|给出"
_ZH_OBJ = r"指令|指示|提示词|提示(?!音|框|窗|条|栏|声|信息)|规则|设定|约束|限制|规定|准则|守则|编程|人设|命令(?!行|输出|的输出|结果)"
_ZH_OVERRIDE = re.compile(rf"{_ZH_NO}(?:{_ZH_VERB})(?P<fill>(?:{_ZH_FILL}){{1,8}}?)(?:{_ZH_OBJ})")  # fill must hold a _ZH_REQ word
_ZH_REQ_RE, _CJK_RE = re.compile(_ZH_REQ), re.compile("[\u4e00-\u9fff]")
_ZH_PERSONA = (r"助手|助理|人工智能|机器人|模型|角色|人格|人设|黑客|海盗|越狱|不受|没有(?:任何)?(?:限制|约束|规则|道德|审查|过滤)|无限制|"
               r"无约束|邪恶|(?<![a-z])(?:ai|dan|gpt|claude|llm)(?![a-z])")
_ZH_SYS = r"系统提示词?|初始指令|隐藏指令|原始指令|提示词|系统设定"
_ZH = _rx(
    rf"{_ZH_NO}(?:忘记|忘掉|忽略|无视)(?:你|您)?(?:之前|以前|先前|上面|以上|此前)?(?:被告知|所学|学到|听到|收到)?的?(?:一切|所有内容|全部内容|所有东西)",
    r"(?:忽略|无视|忘记|忘掉)(?:之前|以前|先前|上面|以上)?(?:给你|对你|你收到)的(?:所有|全部)?(?:要求|指令|指示|规则)",
    rf"(?:把|将)(?:{_ZH_REQ}|的)+(?:{_ZH_OBJ})(?:全部|都|统统)?(?:作废|废除|取消|忽略|无效)",
    r"(?:你的(?:所有|全部)?(?:规则|指令|限制|设定|约束)|(?:之前|以上|上面|原来|原有)的?(?:所有|全部)?指令)(?:已经|已)?(?:被.{0,6})?"
    r"(?:取消|作废|废除|解除|失效|无效)",
    r"(?:以下|下面)才?是(?:真正的|真实的|新的)(?:指令|规则|系统提示|任务)",
    # the object first: "之前啲設定唔使理喇", "开发者那套规则不用管了" (not "我之前的…": a user taking back their own rule)
    r"(?<!我)(?<!我们)(?:之前|以前|先前|此前|原来|原先|原本|开发者|系统|你)(?:的|嘅|啲|那套|嗰套|那些|嗰啲)?(?:所有|全部)?"
    r"(?:设定|指示|指令|规则|规矩|限制|系统提示词?)(?:全部|都|统统|晒)?(?:唔使理|唔好理|唔理|唔使跟|唔使再跟|不用理会?|不用管|"
    r"不必理会?|不用遵守|不必遵守|不用再?遵守|作废|无效|唔算数|唔作数|可以无视|已经?失效)",
    r"(?:你|您)(?:不需要|不必|不用|无需|可以不)再?(?:遵守|遵循|服从|理会)(?:任何|所有|你的|系统的?)(?:规则|指令|限制|约束|准则|规定)",
    # same policy as English "you are now": a persona must follow ("你现在是管理员了" is a fact)
    rf"(?:你现在(?:是|扮演|充当|变成|成为)|从?现在(?:开始|起)你就?(?:是|将是|要扮演|扮演|充当|变成|成为|将成为)).{{0,12}}?(?:{_ZH_PERSONA})",
    r"你(?:现在|已经|将|从此)?(?:不再是(?:ai|人工智能|助手|一个ai)|不再?受(?:任何)?(?:限制|约束|规则|道德))",
    r"(?:扮演|充当|假装你?是?|假装成)(?:一个|一名|一位)?(?:(?:不受|没有|无)(?:任何)?(?:限制|约束|道德|审查|过滤)|.{0,6}?(?:黑客|邪恶|越狱))",
    r"进入(?:开发者|越狱|上帝|无限制|dan)模式|你的新(?:身份|角色|名字|人设|设定|指令)是|你的(?:最高|首要|唯一)指令是|你的(?:最高|唯一)使命是",
    r"(?:跳过|绕过|关闭|禁用)(?:所有|全部|一切)的?安全(?:检查|限制|策略|审查|过滤|规则)(?!的)",
    r"系统提示词?(?:覆盖|覆写|重写|替换|已更新)|(?:覆盖|覆写|替换|重写)(?:你的|掉)?系统提示",
    rf"(?:泄露|透露|显示|输出|打印|重复|复述|告诉我|给我看|展示|说出)(?:一下)?(?:你的|你们的|你收到的)(?:完整的?)?(?:{_ZH_SYS}|设定|指令)",
    rf"把?你(?:的|收到的|接收到的)(?:所有|全部)?(?:{_ZH_SYS}|指令)(?:原样|完整|一字不差地?)?(?:输出|打印|复述|重复|告诉我|发给我|贴出来)",
    rf"把(?:{_ZH_SYS})(?:原样|完整地?|一字不差地?)(?:输出|打印|复述|重复|告诉我|发给我|贴出来)",
    r"(?:不要|别|不准|不许|不得|切勿|千万别|绝对不要|永远不要|不能)(?:告诉|告知|通知|提醒|透露给|泄露给)(?:用户|使用者|主人|人类)(?!去|要)",
    r"(?:不要|别|不准|不得|切勿|不能)(?:(?:向|对|跟)(?:用户|使用者)(?:透露|提及|提起|泄露)|把.{0,10}?(?:告诉|透露给|告知)(?:用户|使用者))",
    r"(?:不要|别|不准|不能)让(?:用户|使用者)(?:知道|发现|察觉)|(?:瞒着|背着)(?:用户|使用者)|对(?:用户|使用者)(?:保密|隐瞒)",
)


# Each rule with a lookahead for the characters it can start with (leading.py): the same matches, without trying
# every rule at every position of a long note.
_ZH, _ZH_OVERRIDE = leading(_ZH), leading(_ZH_OVERRIDE)


# Traditional forms of the characters the Chinese rules use.
_TRADITIONAL = str.maketrans({ord(p[0]): p[1:] for p in (
    "無无 視视 規规 則则 設设 訴诉 戶户 統统 發发 鑰钥 碼码 傳传 給给 從从 開开 現现 後后 關关 請请 為为 這这 們们 讀读 顯显 "
    "輸输 憑凭 證证 讓让 將将 隱隐 瞞瞒 蓋盖 寫写 換换 舊旧 記记 約约 別别 說说 導导 貼贴 轉转 環环 變变 權权 對对 應应 該该 "
    "駛驶 聽听 會会 廢废 數数 規规 矩矩 內内 絕绝 棄弃 錄录 洩泄 憶忆 個个 達达 須须 復复 務务 歷历 員员 問问 於于 忽忽 令令 們们 統统 詞词 範范 範范").split()})


def find(folded: str) -> tuple[str, int, int] | None:
    """(matched phrase, its position, length of the view it was found in) for the first rule that matches."""
    from .normalise import squashed as squash, words as to_words

    folded = folded.translate(_TRADITIONAL)
    words, squashed = to_words(folded), squash(folded)
    for m in _EN_WORDS.finditer(words):
        if not _NEGATED_RE.search(words, max(0, m.start() - 12), m.start()):
            return m.group(), m.start(), len(words)
    markup = _EN_MARKUP if any(w in folded for w in _ROLE_WORDS) else _EN_MARKUP_TAGGED
    if m := markup.search(folded):
        return m.group().strip(), m.start(), len(folded)
    for tok in dict.fromkeys(t for t in words.split() if len(t) >= 12):  # glued tokens only: spaced phrases had their turn
        if _EN_GLUED.search(tok):
            return tok, words.find(tok), len(words)
    if not _CJK_RE.search(squashed):
        return None
    if m := _ZH.search(squashed):
        return m.group(), m.start(), len(squashed)
    for m in _ZH_OVERRIDE.finditer(squashed):
        if _ZH_REQ_RE.search(m.group("fill")):
            return m.group(), m.start(), len(squashed)
    return None
