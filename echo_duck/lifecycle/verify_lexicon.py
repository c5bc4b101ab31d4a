"""Word lists of the contradiction heuristic (verify.py), EN and ZH: general language, not fixture answers.

- ANTONYM: pairs of values that exclude each other in one slot (hot/cold, 上涨/下跌); each word maps to
  (pair id, side).
- NEGATING: words that carry a "not" (never = not always, hates = not like, 讨厌 = 不喜欢), as
  (positive word, negated?).
- SLOT: closed classes whose members exclude each other (package managers, languages, weekdays …).
- VERBS / ZH_VERBS / COPULA: what separates a statement's subject from what it says about it.
- NEUTRAL: predicates, qualifiers and time words: a difference in these alone is wording.
- NONEXCLUSIVE: predicates that hold of many values at once ("likes tea" and "likes coffee").
- UNITS: unit word -> (dimension, factor to the base unit); data sizes accept 1000 and 1024.
- PAST / PRESENT / CESSATION / TRANSITION: time qualifiers that let two claims hold at different times.
"""

from __future__ import annotations

import re

_ANTONYM_PAIRS = """
up down|rise fall|increase decrease|high low|higher lower|hot cold|warm cold|iced hot|sweet savory|sweet salty
introvert extrovert|introverted extroverted|optimistic pessimistic|static dynamic|formal casual|formal informal
top ground|top bottom|early late|morning evening|mornings evenings|morning night|synchronous asynchronous
sync async|public private|online offline|enabled disabled|on off|open closed|rare well-done|aisle window
tab space|tabs spaces|light dark|left right|fast slow|quiet noisy|quiet loud|soft hard|long short
detailed brief|detailed concise|verbose concise|big small|large small|more less|allowed forbidden|always never
true false|yes no|male female|married single|remote onsite|remote office|lunch dinner|summer winter
monthly yearly|weekly monthly|daily weekly|annual monthly|north south|east west|upstairs downstairs|old new
good bad|better worse|happy sad|easy hard|easy difficult|simple complex|cheap expensive|rich poor|strong weak
young old|new used|wet dry|clean dirty|full empty|heavy light|thick thin|wide narrow|deep shallow|tall short
near far|inside outside|indoor outdoor|indoors outdoors|first last|before after|above below|safe dangerous
legal illegal|possible impossible|required optional|mandatory optional|visible hidden|active inactive|valid invalid
success failure|pass fail|win lose|accept reject|approved rejected|increase reduce|include exclude|import export
buy sell|start stop|start end|begin end|open close|push pull|send receive|input output|upload download|login logout
vegetarian carnivore|vegan carnivore|spicy mild|raw cooked|fresh stale|loud soft|bright dim|calm anxious|patient impatient
organized messy|tidy messy|punctual late|frugal extravagant|talkative quiet|extroverted introverted|morning night|day night
ascending descending|horizontal vertical|manual automatic|manually automatically|serial parallel|relative absolute
upper lower|uppercase lowercase|plural singular|even odd|positive negative|major minor|global local|remote local
好 坏|好 差|容易 难|简单 复杂|便宜 贵|富 穷|强 弱|年轻 年老|新 旧|干 湿|干净 脏|满 空|重 轻|厚 薄|宽 窄|深 浅|远 近
室内 室外|第一 最后|之前 之后|上面 下面|安全 危险|合法 违法|必填 选填|必须 可选|可见 隐藏|成功 失败|通过 失败|赢 输
接受 拒绝|批准 拒绝|买 卖|开始 结束|开始 停止|上传 下载|登录 退出|素食 荤食|辣 不辣|生 熟|新鲜 不新鲜|吵 安静|亮 暗
冷静 焦虑|耐心 急躁|整洁 邋遢|准时 迟到|节俭 奢侈|健谈 沉默|白天 晚上|白天 夜里|升序 降序|横向 纵向|手动 自动|串行 并行
大写 小写|正 负|正面 负面|全局 局部|本地 远程|线上 线下|主 次|早上 晚上|上午 下午|喜欢 讨厌|支持 反对|同意 反对
上涨 下跌|涨 跌|上升 下降|升 降|增加 减少|高 低|高层 低层|冷 热|加冰 热|冰 热|甜 咸|软 硬|内向 外向|急性子 慢性子
左撇子 右撇子|同步 异步|安静 热闹|详细 简短|详细 简洁|早睡早起 熬夜晚起|早 晚|靠窗 靠过道|正式 随意|正式 轻松
公开 私有|开启 关闭|打开 关闭|多 少|大 小|长 短|快 慢|乐观 悲观|胖 瘦|男 女|已婚 未婚|白色 黑色|白 黑|东 西|南 北
""".replace("\n", "|").strip("|")
ANTONYM: dict[str, set[tuple[int, int]]] = {}  # word -> {(pair id, side)}: "cold" opposes "hot" and "warm"
for _i, _pair in enumerate(p for p in _ANTONYM_PAIRS.split("|") if p.strip()):
    _x, _y = _pair.split()
    ANTONYM.setdefault(_x, set()).add((_i, 0))
    ANTONYM.setdefault(_y, set()).add((_i, 1))

# word -> (positive word, does the word negate it?)
NEGATING: dict[str, tuple[str, bool]] = {w: pair for pair, words in {
    ("always", True): "never", ("prefer", True): "avoid", ("like", True): "dislike hate hates", ("like", False): "love enjoy",
    ("enable", True): "disable disabled", ("enable", False): "enabled", ("allow", True): "forbid forbidden disallow",
    ("allow", False): "allowed", ("include", True): "exclude", ("require", True): "optional",
    ("喜欢", True): "讨厌 厌恶 反感", ("喜欢", False): "爱 热爱 很爱 偏爱", ("总是", True): "从不 从来不",
    ("允许", True): "禁止 不准 不许", ("偏好", True): "避免",
}.items() for w in words.split()}

SLOT: dict[str, str] = {w: slot for slot, words in {
    "package manager": "npm pnpm yarn bun pip pipenv poetry uv conda",
    "language": "chinese english japanese korean french german spanish cantonese 中文 英文 汉语 英语 日语 韩语 法语 德语 粤语 "
                "普通话 国语 日文 韩文 法文 德文 西班牙语",
    "programming language": "python rust go golang java javascript typescript ruby php kotlin swift",
    "database": "postgres postgresql mysql sqlite duckdb mongodb redis clickhouse tidb",
    "editor": "vim neovim nvim emacs vscode sublime pycharm cursor",
    "shell": "bash zsh fish powershell",
    "operating system": "linux macos windows ubuntu debian",
    "test framework": "pytest unittest jest vitest mocha",
    "cloud": "aws gcp azure",
    "weekday": "monday tuesday wednesday thursday friday saturday sunday 周一 周二 周三 周四 周五 周六 周日 星期一 星期二 "
               "星期三 星期四 星期五 星期六 星期日 星期天",
    "month": "january february march april may june july august september october november december",
    "theme": "dark light",
}.items() for w in words.split()}

# One value named in two languages: a closed class's members that translate each other ('chinese' vs '中文' is the
# same language, 'english' vs '中文' two).
SAME: dict[str, str] = {w: words.split()[0] for words in (
    "chinese 中文 汉语 普通话 国语", "english 英文 英语", "japanese 日语 日文", "korean 韩语 韩文", "french 法语 法文",
    "german 德语 德文", "spanish 西班牙语", "cantonese 粤语", "monday 周一 星期一", "tuesday 周二 星期二",
    "wednesday 周三 星期三", "thursday 周四 星期四", "friday 周五 星期五", "saturday 周六 星期六", "sunday 周日 星期日 星期天",
) for w in words.split()}

COPULA = frozenset("is are was were be been being am 's = : 是 为 乃".split())
VERBS = frozenset("""
accept access add allow answer approve arrive ask attend avoid bake base become begin belong book break bring
build buy call can change charge choose close code come commit compile configure cook cost create cut deal decide
deliver depend deploy describe design develop die do drink drive eat enable end enjoy expire fail fall feel fetch
fill find finish fix fly follow forget get give go grow handle hate have head hear help hire hold host import
include install join keep know last launch lead learn leave let lie like listen live load lock log look lose love
maintain make manage mean meet merge migrate miss move need open order own paint pass pay pick pin plan play point
post prefer prepare publish pull push put quit raise reach read receive record reduce refer release rely remember
remove rent reply report require reset rest retire return review ride ring rise roll run save say schedule see sell
send serve set share shop show sign sing sit sleep smoke speak spend stand start stay stop store study support swim
switch take talk target teach tell test think train travel trigger try turn type understand update upload use visit
wait wake walk want wash watch wear win wish work worry write
""".split())
ZH_VERBS = frozenset("""
是 为 叫 在 住 用 有 要 喝 吃 开 跑 做 去 来 说 会 能 喜欢 偏好 偏爱 希望 想 需要 监听 部署 运行 使用 采用 托管 负责
习惯 发布 上 读 写 工作 学 养 买 打算 坐 听 看 跑在 改到 迁到 搬到 定居 现居 住在 位于 设为 设 返回 支持 配置 开启
关闭 需要 调用 结婚 抽 戒 过敏 开会 上班 办公 回复 回答 考 到 走 留 穿 戴 带 拿 放 送
""".split())
# Predicates and qualifiers: a difference in these alone is wording, not a value.
NEUTRAL = frozenset("""use prefer like want need live work run reply write read call name go make build test
deploy install keep set have get take try start base located locate stay default really also best more most
usually generally mostly often sometimes always enable allow include true based speak know target pin mean
now currently current these day days still today nowadays presently actually exactly about around roughly
approximately only just very quite pretty sharp full-time
用 喜欢 偏好 想 要 需要 住 工作 回复 写 读 跑 运行 部署 安装 叫 是 总是 通常 一般 比较 默认 允许 希望 名叫 名字 说 会 有
现在 目前 如今 现居 定居 住在 还是 还 仍然 依然 一直 平时 平常 每天 都 就 也 很 挺 完全 只 真的 大约 左右 一般""".split())
# Predicates that hold of one value at a time ("is", "is called", "lives in"): a plain value difference
# under one of these (or a superlative such as "favourite") conflicts; under "prefers"/"uses" it may not.
EXCLUSIVE = frozenset("= name call live locate base host target prefer 叫 名叫 住 位于 设为 托管 偏好 定".split())
NONEXCLUSIVE = frozenset("like know speak have love enjoy 喜欢 说 会 有 爱".split())
SUPERLATIVE = frozenset("favourite favorite only best main primary default 最 最爱 最喜欢 只 唯一 主要 默认".split())
SPELLING = {"favourite": "favorite", "colour": "color", "flavour": "flavor", "organise": "organize",
            "behaviour": "behavior", "grey": "gray", "centre": "center", "licence": "license"}

# unit word -> (dimension, factor to the base unit); "data" also matches at powers of 1024.
UNITS: dict[str, tuple[str, float]] = {}
for _dim, _spec in {
    "length": "mm:0.001 cm:0.01 m:1 meter:1 meters:1 metre:1 metres:1 km:1000 kilometer:1000 kilometers:1000 "
              "mile:1609.344 miles:1609.344 ft:0.3048 feet:0.3048 foot:0.3048 inch:0.0254 inches:0.0254 yard:0.9144 "
              "yards:0.9144 毫米:0.001 厘米:0.01 米:1 公里:1000 千米:1000 里:500",
    "mass": "g:0.001 gram:0.001 grams:0.001 kg:1 kilogram:1 kilograms:1 lb:0.45359 lbs:0.45359 pound:0.45359 "
            "pounds:0.45359 oz:0.02835 ounce:0.02835 ounces:0.02835 ton:1000 tons:1000 tonne:1000 吨:1000 克:0.001 "
            "千克:1 公斤:1 斤:0.5 两:0.05",
    "time": "ms:0.001 millisecond:0.001 milliseconds:0.001 s:1 sec:1 secs:1 second:1 seconds:1 min:60 mins:60 "
            "minute:60 minutes:60 h:3600 hr:3600 hrs:3600 hour:3600 hours:3600 day:86400 days:86400 week:604800 "
            "weeks:604800 month:2629800 months:2629800 year:31557600 years:31557600 毫秒:0.001 秒:1 秒钟:1 分钟:60 "
            "分:60 小时:3600 个小时:3600 钟头:3600 天:86400 周:604800 个星期:604800 星期:604800 个月:2629800 年:31557600",
    "data": "b:1 byte:1 bytes:1 kb:1000 mb:1e6 gb:1e9 tb:1e12 kib:1024 mib:1048576 gib:1073741824 tib:1099511627776",
    "volume": "ml:0.001 milliliter:0.001 milliliters:0.001 l:1 liter:1 liters:1 litre:1 litres:1 gallon:3.785 "
              "gallons:3.785 cup:0.24 cups:0.24 毫升:0.001 升:1 公升:1",
    "energy": "kcal:1 cal:0.001 calories:1 卡:1 千卡:1 大卡:1",
    "speed": "kmh:1 km/h:1 mph:1.609344 公里每小时:1",
    "percent": "%:1 percent:1 pct:1",
    "temperature": "degc:1",  # verify_parse._normalise writes every temperature as "<celsius> degc"
}.items():
    for _item in _spec.split():  # (an empty spec is allowed)
        _w, _f = _item.split(":")
        UNITS[_w] = (_dim, float(_f))
BINARY = {"kb": 1024, "mb": 1024 ** 2, "gb": 1024 ** 3, "tb": 1024 ** 4}

EN_NUMBERS = {w: float(i) for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
    "seventeen eighteen nineteen twenty".split())}
EN_NUMBERS.update({"thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90,
                   "a": 1, "an": 1, "half": 0.5, "a half": 0.5, "a dozen": 12, "dozen": 12, "hundred": 100})
# Situations that limit where a preference or habit holds ("tea in the morning", "周末", "with clients").
SITUATIONS = frozenset("""morning mornings evening evenings night nights weekend weekends weekday weekdays work office
home vacation vacations holiday holidays summer winter spring autumn fall flight flights trip trips travel meeting
meetings friend friends family client clients colleague colleagues teammate teammates kid kids child children school
lunch breakfast dinner commute gym party parties personal business email emails chat texting
早上 上午 中午 下午 晚上 夜里 睡前 周末 工作日 平时 上班 下班 在家 家里 公司 办公室 出差 旅行 假期 度假 夏天 冬天 春天
秋天 开会 会议 朋友 家人 客户 同事 孩子 学校 早餐 午饭 晚饭 通勤 健身 聚会 工作 私下 闲聊 聊天""".split())

ZH_DIGITS = {"零": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9}
ZH_MAGNITUDE = {"十": 10, "百": 100, "千": 1000, "万": 10000}

# Time qualifiers. PAST marks a claim bounded to the past; PRESENT one about now; CESSATION verbs
# state a present negation ("quit smoking" = does not smoke now), so they are not merely past.
PAST = re.compile(r"\b(?:used to|was|were|had|until|before|previously|formerly|as a (?:child|kid|student)|growing up|"
                  r"in (?:college|school|his|her|their) |in (?:19|20)\d\d|last (?:year|month|week|sprint)|ago|"
                  r"back then|at first|originally)\b|以前|之前|曾经|曾|去年|小时候|大学时|读书时|上学时|一开始|起初|当年|"
                  r"\d{4} ?年之?前|那时")
PRESENT = re.compile(r"\b(?:now|currently|these days|nowadays|still|this year|today|at present)\b|现在|目前|如今|"
                     r"还是|仍然|依然|今年|眼下")
CESSATION = re.compile(r"\b(?:quit|quits|stopped|gave up|no longer)\b|戒了|戒掉|戒烟|戒酒|不再")
TRANSITION = re.compile(r"\b(?:moved|changed|switched|postponed|migrated|went|was moved|was changed)\s+from\s+(?P<x>.+?)"
                        r"\s+to\s+(?P<y>[^,.;]+)|从(?P<zx>[^，。；]+?)(?:改到|改成|换到|换成|迁到|搬到|调到)了?(?P<zy>[^，。；]+)|"
                        r"(?:后来|然后|then)\s*(?:迁到|改到|换到|换成|搬到|postponed to|moved to|changed to)了?\s*"
                        r"(?P<ty>[^，。；,.]+)", re.I)
