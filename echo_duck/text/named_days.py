"""Calendar words finer than a month or a year: a date ("May 3, 2023", "1 February 2023", "12/31/2023", "2025年3月12日",
"3月12号", "on the 15th", "between May 3 and May 9"), a holiday or season ("去年国庆", "last Christmas", "Memorial Day
weekend", "暑假", "the summer of 2024"), a part of a month ("去年八月底", "early May", "上个月底", "the end of last month")
or of a year ("去年年底", "early last year", 上半年, "Q3", 上个季度).

``named_window(text, now)`` returns the [start, end) of the first of these it finds, or None; ``text`` is the
question as when.py reads it (lower-cased, Han runs in simplified characters). A year the text names (2024年, "in /
of 2024", "summer 2024", 明年 / next year, 去年 / last year, 前年, 今年 / this year, 民國112年; a price such as 2000 is
not a year) anchors it; without one it is the latest such time that has begun by ``now`` ("last …" / 上个: that has
ended; "next …": the coming one). Movable holidays take their own date that year (calendar_days.py: the Chinese lunar
ones from a table, Easter, the US holidays named by a weekday); a lunar one outside the table's years takes the span
of dates it can fall on. A holiday's window then reaches a week to either side (HOLIDAY_SLACK): what people write about
a holiday spreads from plans before it to reports after it. A habit (每年, 一般, "usually") names no holiday or season,
nor does a taste that does not say which one ("which mooncake do I like for Mid-Autumn?"), nor do names and streets
(张国庆, 五一路) or the food 元宵. Pure functions; when.py tries them after "yesterday" and "3 days ago" and before
"last month" or "last year".
"""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta
from typing import Callable, Union

from .calendar_days import easter, lunar_day, nth_weekday

__all__ = ["EN_MONTH", "MONTHS", "anchor_year", "named_window", "zh_month", "zh_number"]

_MONTH_NAMES = ["january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
                "november", "december"]
MONTHS = {m: i + 1 for i, m in enumerate(_MONTH_NAMES)}  # English month names and abbreviations -> 1-12
MONTHS.update({m[:3]: i for m, i in list(MONTHS.items())})
MONTHS["sept"] = 9
EN_MONTH = "|".join(sorted(MONTHS, key=len, reverse=True))  # a regex alternation of them, longest first
_ZH_DIGITS = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9}
_ZH_NUM = "[0-9一二三四五六七八九十两]{1,3}"

# 国庆 / 五一 as a time: at the start, after a word that dates it (去年国庆, 过五一), or with 节 / 假 / 期间 after it;
# not inside a name or a street (张国庆, 五一路, 一五一十).
_AS_TIME = r"(?:(?<![\u4e00-\u9fff]){0}|(?<=[年个的过是在到])\s*{0}|{0}(?=节|假|长假|期间|黄金周|的时候))"
# A habit names no time: 每年过年都去哪, "what do we usually do for Christmas?"
_HABIT = re.compile(r"每年|每逢|一般|通常|往年|\b(?:usually|every year|each year|always|typically)\b")
# A taste names none either unless it says which one: "which mooncake flavour do I like for Mid-Autumn?", 我喜欢什么口味的
# 中秋月饼 (but "what did I love about last Christmas?", 去年中秋最喜欢的那家店)
_TASTE = re.compile(r"喜欢|爱吃|最爱|\b(?:likes?|loves?|prefers?|enjoys?|favou?rite)\b")
_WHICH_ONE = re.compile(r"上个|这个|\b(?:last|this|next|past)\b")

# (month, day) spans: (first month, first day, months later the span ends, last day); a span may run into the next
# year. A movable holiday is a function of the year instead (_around): its date (calendar_days.py) with days of slack
# before and after; a lunar one outside calendar_days' table takes the span of dates it can fall on.
Span = Union[tuple[int, int, int, int], Callable[[int], tuple[datetime, datetime]]]


def _around(day_of: Callable[[int], date | None], before: int, after: int,
            fallback: tuple[int, int, int, int] | None = None) -> Callable[[int], tuple[datetime, datetime]]:
    def window(year: int) -> tuple[datetime, datetime]:
        day = day_of(year)
        if day is None:
            return _span(year, fallback)
        start = datetime(day.year, day.month, day.day)
        return start - timedelta(days=before), start + timedelta(days=after + 1)
    return window


def _lunar(name: str, shift: int = 0) -> Callable[[int], date | None]:
    def day_of(year: int) -> date | None:
        day = lunar_day(name, year)
        return None if day is None else day + timedelta(days=shift)
    return day_of


def _thanksgiving(year: int) -> date:
    return nth_weekday(year, 11, 3, 4)  # the fourth Thursday of November (United States)


_HOLIDAYS: list[tuple[re.Pattern, Span]] = [
    (re.compile(r"除夕|大年三十|大年夜|\bchinese new year'?s eve\b"), _around(_lunar("spring", -1), 1, 1, (1, 20, 1, 20))),
    (re.compile(r"大年初一"), _around(_lunar("spring"), 1, 1, (1, 21, 1, 21))),
    (re.compile(r"春节|过年|大年初|农历新年|农历年|\bchinese new year\b|\blunar new year\b|\bspring festival\b"),
     _around(_lunar("spring"), 2, 7, (1, 20, 1, 21))),
    (re.compile(r"元宵节|正月十五"), _around(_lunar("lantern"), 1, 2, (2, 4, 1, 6))),
    (re.compile(r"七夕"), _around(_lunar("qixi"), 1, 2, (7, 28, 1, 30))),  # before 情人节: 七夕情人节 is in August
    (re.compile(r"情人节|\bvalentine'?s?\b"), (2, 13, 0, 15)),
    (re.compile(r"元旦|\bnew year'?s day\b"), (1, 1, 0, 3)),
    (re.compile(r"\bnew year'?s eve\b|跨年夜|跨年那[天晚]|跨年的时候"), (12, 30, 1, 1)),
    (re.compile(r"清明"), (4, 3, 0, 7)),
    (re.compile(r"\beaster\b"), _around(easter, 3, 2)),  # Good Friday to Easter Monday, a day either side
    (re.compile(_AS_TIME.format("五一") + r"(?![路广大])|劳动节|\bmay day\b"), (4, 30, 1, 6)),
    (re.compile(r"端午|\bdragon boat\b"), _around(_lunar("dragon_boat"), 2, 3, (5, 27, 1, 26))),
    (re.compile(r"母亲节|\bmother'?s'? day\b"), _around(lambda year: nth_weekday(year, 5, 6, 2), 1, 2)),
    (re.compile(r"\bmemorial day\b"), _around(lambda year: nth_weekday(year, 5, 0, -1), 3, 1)),
    (re.compile(r"父亲节|\bfather'?s'? day\b"), _around(lambda year: nth_weekday(year, 6, 6, 3), 1, 2)),
    (re.compile(r"\bindependence day\b|\bfourth of july\b|\bjuly 4th\b"), (7, 3, 0, 6)),
    (re.compile(r"\blabou?r day\b"), _around(lambda year: nth_weekday(year, 9, 0, 1), 3, 1)),
    (re.compile(r"中秋|八月十五|\bmid-?autumn\b"), _around(_lunar("mid_autumn"), 2, 3, (9, 6, 1, 9))),
    (re.compile(_AS_TIME.format("国庆") + r"|十一假期|十一长假|十一黄金周|\bnational day\b"), (9, 28, 1, 9)),
    (re.compile(r"双十节"), (10, 9, 0, 12)),  # Taiwan's National Day, 10 October
    (re.compile(r"\bhalloween\b"), (10, 30, 1, 2)),
    (re.compile(r"双十一|双11"), (11, 10, 0, 13)),
    (re.compile(r"\bblack friday\b"), _around(lambda year: _thanksgiving(year) + timedelta(days=1), 1, 3)),
    (re.compile(r"\bthanksgiving\b"), _around(_thanksgiving, 1, 4)),
    (re.compile(r"冬至"), (12, 20, 0, 24)),
    (re.compile(r"圣诞|平安夜|\bchristmas\b|\bxmas\b"), (12, 23, 0, 28)),
]
# School breaks, and seasons only where the text says which one (last / this / past summer, the summer of 2024,
# 去年 / 今年 / 这个 / 上个 夏天): "in the winter" and 夏天他最馋什么 say when something tends to happen, not when.
_EN_SEASON = r"\b(?:last|this|past|previous)\s+{0}\b|\b{0}\s+(?:of\s+)?(?:19|20)\d\d\b"
_ZH_SEASON = r"(?:去年|今年|前年|明年|这个|上个)(?:的)?{0}"
_SEASONS: list[tuple[re.Pattern, Span]] = [
    (re.compile(r"暑假|\bsummer (?:break|vacation|holidays?)\b"), (7, 1, 2, 5)),
    (re.compile(r"寒假"), (1, 10, 1, 28)),
    (re.compile(r"\bwinter (?:break|vacation|holidays?)\b|\bchristmas (?:break|holidays?)\b"), (12, 18, 1, 10)),
    (re.compile(_ZH_SEASON.format("(?:春天|春季)") + "|" + _EN_SEASON.format("spring")), (3, 1, 2, 31)),
    (re.compile(_ZH_SEASON.format("(?:夏天|夏季)") + "|" + _EN_SEASON.format("summer")), (6, 1, 2, 31)),
    (re.compile(_ZH_SEASON.format("(?:秋天|秋季)") + "|" + _EN_SEASON.format("(?:autumn|fall)")), (9, 1, 2, 30)),
    (re.compile(_ZH_SEASON.format("(?:冬天|冬季)") + "|" + _EN_SEASON.format("winter")), (12, 1, 2, 28)),
]
_YEAR_PARTS = [
    (re.compile(r"年初|开年|\b(?:early|beginning of|start of) (?:last|this|the) year\b|\bearly (?:19|20)\d\d\b"),
     (1, 1, 1, 28)),
    (re.compile(r"(?<![去今一前明这那])年中(?![国文学心华])|\bmid-?(?:last |this )?year\b"), (5, 15, 2, 15)),
    (re.compile(r"年底|年末|年终(?!奖)|\b(?:late|end of) (?:last|this|the) year\b|\blate (?:19|20)\d\d\b"), (11, 1, 1, 31)),
]
# Halves and quarters: asked in their first month, the one before is meant (上半年 in January is last year's)
_LONG_PARTS = [
    (re.compile(r"上半年|\bfirst half of (?:last|this|the) year\b|\bfirst half of (?:19|20)\d\d\b"), (1, 1, 5, 30)),
    (re.compile(r"下半年|\bsecond half of (?:last|this|the) year\b|\bsecond half of (?:19|20)\d\d\b"), (7, 1, 5, 31)),
    # a numbered quarter of a year: 第三季度, "Q3", "the third quarter" (上个季度 / "last quarter": named_window)
    (re.compile(r"第一季度|一季度|\bq1\b|\bfirst quarter\b"), (1, 1, 2, 31)),
    (re.compile(r"第二季度|二季度|\bq2\b|\bsecond quarter\b"), (4, 1, 2, 30)),
    (re.compile(r"第三季度|三季度|\bq3\b|\bthird quarter\b"), (7, 1, 2, 30)),
    (re.compile(r"第四季度|四季度|\bq4\b|\bfourth quarter\b"), (10, 1, 2, 31)),
]

_NAMED = _HOLIDAYS + _SEASONS + _YEAR_PARTS + _LONG_PARTS
_HOLIDAY_PATTERNS = frozenset(pattern for pattern, _ in _HOLIDAYS)
_LONG_PATTERNS = frozenset(pattern for pattern, _ in _LONG_PARTS)
# A holiday's window reaches a week to either side of its days: in the recall sets, what people write about a holiday
# spreads from plans a week or more before to reports days after (chosen on zh_fit and bilingual, see RANKING.md)
HOLIDAY_SLACK = timedelta(days=7)
# An English text names none of them without one of these words (a set lookup is cheaper than 25 searches).
_EN_CUES = frozenset("new year years eve chinese lunar spring valentine valentines easter may dragon independence "
                     "fourth july national halloween thanksgiving christmas xmas summer winter autumn fall "
                     "early beginning start mid late end black friday memorial labor labour mother mothers "
                     "father fathers half q1 q2 q3 q4 quarter".split())
_WORD = re.compile("[a-z]+")

_YEAR = re.compile(r"(?<!\d)((?:19|20)\d\d)\s*年|\b(?:in|of|during|since|from|year|summer|winter|spring|autumn|fall|"
                   r"christmas|easter|thanksgiving|halloween|" + EN_MONTH + r")\s+((?:19|20)\d\d)\b")
_EN_DATE_MD = re.compile(r"\b(" + EN_MONTH + r")\.?\s+(\d{1,2})(?:st|nd|rd|th)?\b(?:,?\s+((?:19|20)\d\d)\b)?")
_EN_DATE_DM = re.compile(r"\b(\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?(" + EN_MONTH + r")\b(?:,?\s+((?:19|20)\d\d)\b)?")
_ISO_DATE = re.compile(r"\b((?:19|20)\d\d)-(\d{1,2})-(\d{1,2})\b")
_SLASH_DATE = re.compile(r"\b(\d{1,2})/(\d{1,2})/((?:19|20)\d\d)\b")  # 12/31/2023 (month first unless it cannot be)
# a range of days: "between May 3 and May 9", "from May 3 to 9"
_EN_DAY_RANGE = re.compile(r"\b(?:between|from)\s+(" + EN_MONTH + r")\.?\s+(\d{1,2})(?:st|nd|rd|th)?\s+(?:and|to|until|"
                           r"till|through|-)\s+(?:(" + EN_MONTH + r")\.?\s+)?(\d{1,2})(?:st|nd|rd|th)?\b")
# "on the 15th": the latest such day (not "the 15th of May", a date; nor "on the 3rd floor")
_DAY_OF_MONTH = re.compile(r"\bon the (\d{1,2})(?:st|nd|rd|th)\b(?!\s+(?:of|floor|row|page|line|try|attempt|time|lap|"
                           r"hole|level|round|step|place|grade|day|week|month|year)\b)")
_ROC_YEAR = re.compile(r"民国\s*(\d{2,3})\s*年")  # Taiwan's calendar: 民國112年 is 2023
_ZH_DATE = re.compile(r"(?:((?:19|20)\d\d)\s*年\s*)?(" + _ZH_NUM + r")\s*月\s*(" + _ZH_NUM + r")\s*[日号]")
_EN_MONTH_PART = re.compile(r"\b(early|beginning of|start of|mid-?|middle of|late|end of)\s*(" + EN_MONTH + r")\b")
_EN_REL_MONTH_PART = re.compile(r"\b(early|beginning of|start of|mid-?|middle of|late|end of)\s*(?:the\s+)?"
                                r"(last|previous|this) month\b")
# a calendar quarter relative to now: 上个季度, 这个季度, "last quarter", "this quarter"
_REL_QUARTER = re.compile(r"(上个?季度|这个?季度|本季度)|\b(last|previous|this) quarter\b")
_PART = r"(初|上旬|中旬|中(?=[的时左前后,，。？?\s]|$)|下旬|底|末)"
_ZH_MONTH_PART = re.compile(r"(?<![\d个])(" + _ZH_NUM + r")\s*月(?:份)?\s*" + _PART)
_ZH_REL_MONTH_PART = re.compile(r"(上上个?月|上个月|(?<!马)上月|这个月|本月)" + _PART)
_MAY_VERB = re.compile(r"\s+(?:i|we|you|he|she|they|it|be|have|not)\b")  # "how late may I check out?"
_ZH_MONTH_WORD = re.compile(r"(?<![\d个第十])(十[一二]|[一二三四五六七八九十])\s*月(?!前|后|以后|之后|天|饼|怀)")  # 五月天: a band


def zh_number(text: str) -> int | None:
    """Digits or Chinese numerals up to 99 (十二, 二十一, 三十, 两): the value, else None."""
    if text.isdigit():
        return int(text)
    if "十" in text:
        tens, _, ones = text.partition("十")
        t = 1 if not tens else _ZH_DIGITS.get(tens)
        o = 0 if not ones else _ZH_DIGITS.get(ones)
        return None if t is None or o is None or len(ones) > 1 or len(tens) > 1 else 10 * t + o
    return _ZH_DIGITS.get(text) if len(text) == 1 else None


def anchor_year(text: str, now: datetime) -> int | None:
    """The year the text names: 2023年 or "in / of 2023", 明年 / next year, 前年 / the year before last, 去年 / last
    year, 今年 / this year; else None."""
    found = _YEAR.search(text)
    if found:
        return int(found.group(1) or found.group(2))
    found = _ROC_YEAR.search(text)
    if found:
        return 1911 + int(found.group(1))
    if "明年" in text or re.search(r"\bnext year\b", text):
        return now.year + 1
    if "前年" in text or "the year before last" in text:
        return now.year - 2
    if "去年" in text or re.search(r"\blast year\b", text):
        return now.year - 1
    if "今年" in text or re.search(r"\bthis year\b", text):
        return now.year
    return None


def _span(year: int, span: Span) -> tuple[datetime, datetime]:
    if callable(span):
        return span(year)
    month, day, months_later, last_day = span
    start = datetime(year, month, day)
    end_year, end_month = divmod(year * 12 + month - 1 + months_later, 12)
    end_month += 1
    last = min(last_day, _days_in(end_year, end_month))
    return start, datetime(end_year, end_month, last) + timedelta(days=1)


def _days_in(year: int, month: int) -> int:
    nxt = datetime(year + (month == 12), month % 12 + 1, 1)
    return (nxt - timedelta(days=1)).day


def _latest(span: Span, now: datetime, year: int | None,
            over: bool = False) -> tuple[datetime, datetime]:
    """The span in the anchored year, else the latest one that has begun by ``now`` (``over``: that has ended)."""
    if year is not None:
        return _span(year, span)
    for back in range(3):
        start, end = _span(now.year - back, span)
        if (end if over else start) <= now:
            return start, end
    return _span(now.year - 3, span)


def _coming(span: Span, now: datetime) -> tuple[datetime, datetime]:
    """The next one that has not begun by ``now``."""
    start, end = _span(now.year, span)
    return (start, end) if start > now else _span(now.year + 1, span)


def _day(year: int | None, month: int, day: int, now: datetime) -> tuple[datetime, datetime] | None:
    if not 1 <= month <= 12 or not 1 <= day <= _days_in(year or 2000, month):
        return None
    if year is None:
        year = now.year if (month, day) <= (now.month, now.day) else now.year - 1
    start = datetime(year, month, day)
    return start - timedelta(days=2), start + timedelta(days=3)


def _month_part(year: int | None, month: int, part: str, now: datetime) -> tuple[datetime, datetime] | None:
    if not 1 <= month <= 12:
        return None
    if year is None:
        year = now.year if month <= now.month else now.year - 1
    last = _days_in(year, month)
    if part in ("初", "上旬", "early", "beginning of", "start of"):
        first, final = 1, 11
    elif part in ("中", "中旬", "mid", "mid-", "middle of"):
        first, final = 10, 21
    else:
        first, final = 20, last
    start = datetime(year, month, first) - timedelta(days=2)
    return start, datetime(year, month, final) + timedelta(days=3)


def named_window(text: str, now: datetime) -> tuple[datetime, datetime] | None:
    """[start, end) of the date, holiday, season or part of a month or year that ``text`` names, else None."""
    year = anchor_year(text, now)
    found = _ISO_DATE.search(text)
    if found:
        return _day(int(found.group(1)), int(found.group(2)), int(found.group(3)), now)
    found = _SLASH_DATE.search(text)
    if found:
        first, second = int(found.group(1)), int(found.group(2))
        month, day = (second, first) if first > 12 else (first, second)
        return _day(int(found.group(3)), month, day, now)
    found = _EN_DAY_RANGE.search(text)
    if found:
        first = _day(year, MONTHS[found.group(1)], int(found.group(2)), now)
        start_year = first and (first[0] + timedelta(days=2)).year  # _day's window starts two days early
        last = first and _day(start_year, MONTHS[found.group(3) or found.group(1)], int(found.group(4)), now)
        if first and last and first[0] <= last[0]:
            return first[0], last[1]
    found = _DAY_OF_MONTH.search(text)
    if found and 1 <= int(found.group(1)) <= 31:
        day, y, m = int(found.group(1)), now.year, now.month
        if day > now.day:  # this month's is still to come: last month's
            y, m = (y, m - 1) if m > 1 else (y - 1, 12)
        if day <= _days_in(y, m):
            return _day(y, m, day, now)
    found = _EN_DATE_MD.search(text)
    if found:
        return _day(int(found.group(3)) if found.group(3) else year, MONTHS[found.group(1)], int(found.group(2)), now)
    found = _EN_DATE_DM.search(text)
    if found:
        return _day(int(found.group(3)) if found.group(3) else year, MONTHS[found.group(2)], int(found.group(1)), now)
    found = _ZH_DATE.search(text)
    if found:
        month, day = zh_number(found.group(2)), zh_number(found.group(3))
        if month is not None and day is not None:
            return _day(int(found.group(1)) if found.group(1) else year, month, day, now)
    named = not text.isascii() or not _EN_CUES.isdisjoint(_WORD.findall(text))
    habit = _HABIT.search(text) or (_TASTE.search(text) and year is None and not _WHICH_ONE.search(text))
    for pattern, span in _NAMED if named and not habit else ():
        found = pattern.search(text)
        if found:  # "last summer", 上个夏天, "last Christmas": the latest one that is over; "next …": the coming one
            before = text[:found.start()].rstrip()
            if found.group(0).startswith("next ") or before.endswith("next"):
                return _coming(span, now)
            over = found.group(0).startswith(("last ", "上个")) or before.endswith("last")
            start, end = _latest(span, now, year, over)
            if pattern in _LONG_PATTERNS and year is None and now - start < timedelta(days=31):
                start, end = _span(start.year - 1, span)
            if pattern in _HOLIDAY_PATTERNS:  # plans are written before a holiday, what happened after it
                return start - HOLIDAY_SLACK, end + HOLIDAY_SLACK
            return start, end
    found = _ZH_MONTH_PART.search(text)
    if found and zh_number(found.group(1)) is not None:
        return _month_part(year, zh_number(found.group(1)), found.group(2), now)
    found = _ZH_REL_MONTH_PART.search(text)
    if found:
        back = 2 if found.group(1).startswith("上上") else 1 if found.group(1) in ("上个月", "上月") else 0
        y, m = divmod(now.year * 12 + now.month - 1 - back, 12)
        return _month_part(y, m + 1, found.group(2), now)
    found = _EN_REL_MONTH_PART.search(text)
    if found:
        y, m = divmod(now.year * 12 + now.month - 1 - (found.group(2) != "this"), 12)
        return _month_part(y, m + 1, found.group(1).rstrip("-"), now)
    found = _REL_QUARTER.search(text)
    if found:  # the quarter before this one, or this one (to now)
        back = 1 if (found.group(1) or "").startswith("上") or found.group(2) in ("last", "previous") else 0
        y, q = divmod(now.year * 4 + (now.month - 1) // 3 - back, 4)
        start = datetime(y, 3 * q + 1, 1)
        end = min(_span(y, (3 * q + 1, 1, 2, 31))[1] + timedelta(days=3),
                  datetime(now.year, now.month, now.day) + timedelta(days=1))
        return start - timedelta(days=3), end
    found = _EN_MONTH_PART.search(text)
    if found and not (found.group(2) == "may" and _MAY_VERB.match(text, found.end())):
        return _month_part(year, MONTHS[found.group(2)], found.group(1).rstrip("-"), now)
    return None


def zh_month(text: str) -> re.Match | None:
    """A month named in Chinese numerals (六月, 十二月): the match, its numeral in group 1 (zh_number reads it), else
    None. when.py reads 6月 itself."""
    return _ZH_MONTH_WORD.search(text)
