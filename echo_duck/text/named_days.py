"""Calendar words finer than a month or a year: a date ("May 3, 2023", "1 February 2023", "12/31/2023", "2025年3月12日",
"3月12号", "on the 15th", "between May 3 and May 9", 7月5号到12号, "the week of May 12"), a holiday or season ("去年国庆",
"last Christmas", "Memorial Day weekend", 教师节, "暑假", "the summer of 2024", "since New Year's"), a part of a month
("去年八月底", "early May", "上个月底", "the end of last month") or of a year ("去年年底", "early last year", 上半年, "Q3",
上个季度).

``named_window(text, now)`` returns the [start, end) of the first of these it finds, or None; ``text`` is the
question as when.py reads it (lower-cased, Han runs in simplified characters). A year the text names (2024年, "in /
of 2024", "summer 2024", 明年 / next year, 去年 / last year, 前年, 今年 / this year, 民國112年, "two years ago" / 两年前:
that year; a price such as 2000 is not a year) anchors it; without one it is the latest such time that has begun by
``now`` ("last …" / 上个: that has ended; "next …": the coming one). Which holidays, seasons and parts of a year there
are, and their days, is named_spans.py; a holiday's window reaches a week to either side (HOLIDAY_SLACK): what people
write about a holiday spreads from plans before it to reports after it. A habit (每年, 一般, "usually") names no holiday
or season, nor does a taste that does not say which one ("which mooncake do I like for Mid-Autumn?"), nor do names and
streets (张国庆, 五一路) or the food 元宵. Pure functions; when.py tries them after "yesterday" and "3 days ago" and before
"last month" or "last year".
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta

from .named_spans import (EN_CUES, FALL_TERM, HOLIDAY_PATTERNS, HOLIDAY_SLACK, LONG_PATTERNS, NAMED, SPRING_TERM, Span,
                          days_in, span_dates)

__all__ = ["EN_MONTH", "MONTHS", "PAST", "PAST_TENSE", "anchor_year", "named_window", "zh_month", "zh_number"]

_WORD = re.compile("[a-z]+")
# a question about what happened (English verbs in the past tense; Chinese 了 / 过 as an aspect, not 过年 / 过来)
PAST_TENSE = re.compile(r"\b(?:did|was|were|had|went|got|made|took|bought|saw|said|told|ate|paid|spent|met|left|came|"
                        r"gave|forgot|missed|ordered|visited|called|cooked|watched|played|parked)\b")
PAST = re.compile(PAST_TENSE.pattern + r"|了|过(?![来去年节])|\b(?:celebrated|stayed|hosted|brought|sent|wore)\b")

_MONTH_NAMES = ["january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
                "november", "december"]
MONTHS = {m: i + 1 for i, m in enumerate(_MONTH_NAMES)}  # English month names and abbreviations -> 1-12
MONTHS.update({m[:3]: i for m, i in list(MONTHS.items())})
MONTHS["sept"] = 9
EN_MONTH = "|".join(sorted(MONTHS, key=len, reverse=True))  # a regex alternation of them, longest first
_ZH_DIGITS = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9}
_ZH_NUM = "[0-9一二三四五六七八九十两]{1,3}"

# A habit names no time: 每年过年都去哪, "what do we usually do for Christmas?"
_HABIT = re.compile(r"每年|每逢|一般|通常|往年|\b(?:usually|every year|each year|always|typically)\b")
# A taste names none either unless it says which one: "which mooncake flavour do I like for Mid-Autumn?", 我喜欢什么口味的
# 中秋月饼 (but "what did I love about last Christmas?", 去年中秋最喜欢的那家店)
_TASTE = re.compile(r"喜欢|爱吃|最爱|\b(?:likes?|loves?|prefers?|enjoys?|favou?rite)\b")
_WHICH_ONE = re.compile(r"上个|这个|\b(?:last|this|next|past)\b")



_YEAR = re.compile(r"(?<!\d)((?:19|20)\d\d)\s*年|\b(?:in|of|during|since|from|year|early|late|mid|summer|winter|spring|"
                   r"autumn|fall|christmas|easter|thanksgiving|halloween|" + EN_MONTH + r")\s+((?:19|20)\d\d)\b")
_EN_DATE_MD = re.compile(r"\b(" + EN_MONTH + r")\.?\s+(\d{1,2})(?:st|nd|rd|th)?\b(?:,?\s+((?:19|20)\d\d)\b)?")
_EN_DATE_DM = re.compile(r"\b(\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?(" + EN_MONTH + r")\b(?:,?\s+((?:19|20)\d\d)\b)?")
# 2023-09-15, 2022/10/3, 2022.10.3 (not a version number such as 2023.1.2.5)
_ISO_DATE = re.compile(r"(?<![\d.])((?:19|20)\d\d)([-/.])(\d{1,2})\2(\d{1,2})(?![\d.])")
_SLASH_DATE = re.compile(r"\b(\d{1,2})/(\d{1,2})/((?:19|20)\d\d)\b")  # 12/31/2023 (month first unless it cannot be)
# a range of days: "between May 3 and May 9", "from May 3 to 9"
_EN_DAY_RANGE = re.compile(r"\b(?:between|from)\s+(" + EN_MONTH + r")\.?\s+(\d{1,2})(?:st|nd|rd|th)?\s+(?:and|to|until|"
                           r"till|through|-)\s+(?:(" + EN_MONTH + r")\.?\s+)?(\d{1,2})(?:st|nd|rd|th)?\b")
# 7月5号到7月12号, 7月5日至12日, 2023年7月5号到12号
_ZH_DAY_RANGE = re.compile(r"(?:((?:19|20)\d\d)\s*年\s*)?(" + _ZH_NUM + r")\s*月\s*(" + _ZH_NUM + r")\s*[日号]?\s*"
                           r"(?:到|至|~|-|—|－)\s*(?:(" + _ZH_NUM + r")\s*月\s*)?(" + _ZH_NUM + r")\s*[日号]")
# the week of a date: "the week of May 12", 5月12号那周
_EN_WEEK_OF = re.compile(r"\b(?:the )?week of (" + EN_MONTH + r")\.?\s+(\d{1,2})(?:st|nd|rd|th)?\b")
_ZH_WEEK_OF = re.compile(r"(" + _ZH_NUM + r")\s*月\s*(" + _ZH_NUM + r")\s*[日号]?\s*(?:那|这|的那)(?:一|个)?(?:周|星期|礼拜)")
# "on the 15th": the latest such day (not "the 15th of May", a date; nor "on the 3rd floor")
_DAY_OF_MONTH = re.compile(r"\bon the (\d{1,2})(?:st|nd|rd|th)\b(?!\s+(?:of|floor|row|page|line|try|attempt|time|lap|"
                           r"hole|level|round|step|place|grade|day|week|month|year)\b)")
_EN_COUNT = {"a": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
             "ten": 10}
_YEARS_AGO = re.compile(r"\b(an?|one|two|three|four|five|six|seven|eight|nine|ten|\d{1,2}) years? ago\b"
                        r"|(?<![\d一两二三四五六七八九十几多])(\d{1,2}|[一两二三四五六七八九十]{1,3})年前")
# a date written without separators (20230915), or month and day alone: "on 5/12", 3.15那天
_COMPACT_DATE = re.compile(r"(?<!\d)((?:19|20)\d\d)(0[1-9]|1[0-2])(0[1-9]|[12]\d|3[01])(?!\d)")
_MONTH_DAY = re.compile(r"\b(?:on|since|from|by|before|after) (\d{1,2})/(\d{1,2})\b(?!/)"
                        r"|(?<![\d./])(\d{1,2})[./](\d{1,2})(?=\s*(?:那天|当天|那日|号|日|的时候))")
# a day of this month or the last: "the week of the 15th", "from the 3rd to the 7th"
_WEEK_OF_DAY = re.compile(r"\bweek of the (\d{1,2})(?:st|nd|rd|th)\b")
_DAYS_OF_MONTH = re.compile(r"\b(?:from|between) the (\d{1,2})(?:st|nd|rd|th)? (?:to|and|until|till|through) the "
                            r"(\d{1,2})(?:st|nd|rd|th)\b")
# a year in two digits where a month or a named time follows: 23年5月, 21年国庆, "summer '22"
_SHORT_YEAR = re.compile(r"(?<![\d.])(\d\d)\s*年(?=\s*(?:\d{1,2}\s*月|[一二三四五六七八九十]{1,2}\s*月|的?(?:国庆|春节|过年|"
                         r"中秋|端午|元旦|五一|清明|暑假|寒假|春天|夏天|秋天|冬天|年初|年底|年中|上半年|下半年|圣诞|双十一|双11|双十二|"
                         r"七夕|情人节|元宵|除夕|618)))"
                         r"|\b(?:summer|winter|spring|autumn|fall|christmas|easter|" + EN_MONTH + r")\s+'(\d\d)\b")
# the last school term (上学期, "last semester": the latest that has ended) or this one (这学期: from its start to now)
# (not 大一上学期 / 三年级上学期, the first term of a school year)
_TERM = re.compile(r"(?<![一二三四五六级年])(上个?|这个?|本)学期|\b(last|this) (?:semester|term)\b")
_ROC_YEAR = re.compile(r"民国\s*(\d{2,3})\s*年")  # Taiwan's calendar: 民國112年 is 2023
_ZH_DATE = re.compile(r"(?:((?:19|20)\d\d)\s*年\s*)?(" + _ZH_NUM + r")\s*月\s*(" + _ZH_NUM + r")\s*[日号]")
_EN_MONTH_PART = re.compile(r"\b(early|beginning of|start of|mid-?|middle of|late|end of)\s*(" + EN_MONTH + r")\b")
_EN_REL_MONTH_PART = re.compile(r"\b(early|beginning of|start of|mid-?|middle of|late|end of)\s*(?:the\s+)?"
                                r"(last|previous|this|the) month\b")
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
    found = _SHORT_YEAR.search(text)
    if found and int(found.group(1) or found.group(2)) <= now.year % 100:
        return 2000 + int(found.group(1) or found.group(2))
    if "明年" in text or re.search(r"\bnext year\b", text):
        return now.year + 1
    if "前年" in text or "the year before last" in text:
        return now.year - 2
    if "去年" in text or re.search(r"\blast year\b", text):
        return now.year - 1
    if "今年" in text or re.search(r"\bthis year\b", text):
        return now.year
    found = _YEARS_AGO.search(text)  # "Christmas two years ago", 两年前的春节: that year's
    count = found and (found.group(1) or found.group(2))
    back = count and (int(count) if count.isdigit() else _EN_COUNT.get(count) or zh_number(count))
    return now.year - back if back else None




def _latest(span: Span, now: datetime, year: int | None,
            over: bool = False) -> tuple[datetime, datetime]:
    """The span in the anchored year, else the latest one that has begun by ``now`` (``over``: that has ended)."""
    if year is not None:
        return span_dates(year, span)
    for back in range(3):
        start, end = span_dates(now.year - back, span)
        if (end if over else start) <= now:
            return start, end
    return span_dates(now.year - 3, span)


def _coming(span: Span, now: datetime) -> tuple[datetime, datetime]:
    """The next one that has not begun by ``now``."""
    start, end = span_dates(now.year, span)
    return (start, end) if start > now else span_dates(now.year + 1, span)


def _day(year: int | None, month: int, day: int, now: datetime) -> tuple[datetime, datetime] | None:
    if not 1 <= month <= 12 or not 1 <= day <= days_in(year or 2000, month):
        return None
    if year is None:
        year = now.year if (month, day) <= (now.month, now.day) else now.year - 1
    start = datetime(year, month, day)
    return start - timedelta(days=2), start + timedelta(days=3)


def _month_first(first: int, second: int) -> tuple[int, int]:
    """(month, day) of a numeric date written month first, unless its first number cannot be a month (31/12)."""
    return (second, first) if first > 12 else (first, second)


def _week_of(day: tuple[datetime, datetime]) -> tuple[datetime, datetime]:
    """Monday to Sunday of the week holding a _day window's day, two days' slack either side."""
    named = day[0] + timedelta(days=2)  # _day's window starts two days early
    monday = named - timedelta(days=named.weekday())
    return monday - timedelta(days=2), monday + timedelta(days=9)


def _latest_day(day: int, now: datetime) -> tuple[datetime, datetime] | None:
    """The window of day ``day`` of this month, or of the last when this month's is still to come."""
    y, m = now.year, now.month
    if day > now.day:
        y, m = (y, m - 1) if m > 1 else (y - 1, 12)
    return _day(y, m, day, now) if 1 <= day <= days_in(y, m) else None


def _range_end(year: int, month: int, day: int, now: datetime,
               first: tuple[datetime, datetime]) -> tuple[datetime, datetime] | None:
    """The window of a range's last day, in the year of its first day, or across New Year ("Dec 28 to Jan 3", at
    most three months on); None when that is not a day or comes before the first."""
    last = _day(year, month, day, now)
    if last and last[0] >= first[0]:
        return last
    last = _day(year + 1, month, day, now)
    return last if last and timedelta(0) <= last[0] - first[0] <= timedelta(days=92) else None


def _month_part(year: int | None, month: int, part: str, now: datetime) -> tuple[datetime, datetime] | None:
    if not 1 <= month <= 12:
        return None
    if year is None:
        year = now.year if month <= now.month else now.year - 1
    last = days_in(year, month)
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
        return _day(int(found.group(1)), int(found.group(3)), int(found.group(4)), now)
    found = _COMPACT_DATE.search(text)
    if found:
        return _day(int(found.group(1)), int(found.group(2)), int(found.group(3)), now)
    found = _MONTH_DAY.search(text)
    if found:
        first, second = (int(g) for g in (found.group(1, 2) if found.group(1) else found.group(3, 4)))
        month, day = _month_first(first, second)
        window = _day(year, month, day, now)
        if window:
            return window
    found = _SLASH_DATE.search(text)
    if found:
        first, second = int(found.group(1)), int(found.group(2))
        month, day = _month_first(first, second)
        return _day(int(found.group(3)), month, day, now)
    found = _EN_DAY_RANGE.search(text)
    if found:
        first = _day(year, MONTHS[found.group(1)], int(found.group(2)), now)
        start_year = first and (first[0] + timedelta(days=2)).year  # _day's window starts two days early
        last = first and _range_end(start_year, MONTHS[found.group(3) or found.group(1)], int(found.group(4)), now,
                                    first)
        if last:
            return first[0], last[1]
    found = _ZH_DAY_RANGE.search(text)
    if found:
        numbers = [zh_number(found.group(i)) if found.group(i) else None for i in (2, 3, 4, 5)]
        first_year = int(found.group(1)) if found.group(1) else year
        first = None if None in (numbers[0], numbers[1], numbers[3]) else _day(first_year, numbers[0], numbers[1], now)
        start_year = first and (first[0] + timedelta(days=2)).year  # _day's window starts two days early
        last = first and _range_end(start_year, numbers[2] or numbers[0], numbers[3], now, first)
        if last:
            return first[0], last[1]
    found = _EN_WEEK_OF.search(text) or _ZH_WEEK_OF.search(text)
    if found:
        month = MONTHS.get(found.group(1)) or zh_number(found.group(1))
        day = found.group(2) and zh_number(found.group(2))
        named_day = month and day and _day(year, month, day, now)
        if named_day:
            return _week_of(named_day)
    found = _WEEK_OF_DAY.search(text) or _DAYS_OF_MONTH.search(text)
    days = found and [_latest_day(int(d), now) for d in found.groups() if d]
    if days and all(days) and days[0][0] <= days[-1][0]:
        if found.re is _DAYS_OF_MONTH:  # from the first to the last
            return days[0][0], days[-1][1]
        return _week_of(days[0])
    found = _DAY_OF_MONTH.search(text)
    window = found and _latest_day(int(found.group(1)), now)
    if window:
        return window
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
    found = _TERM.search(text)
    if found:
        years = range(now.year - 2, now.year + 1)
        terms = sorted(span_dates(y, term) for y in years for term in (FALL_TERM, SPRING_TERM))
        if (found.group(1) or found.group(2)).startswith(("上", "last")):
            ended = [t for t in terms if t[1] <= now]
            return ended[-1] if ended else None
        start = max(t[0] for t in terms if t[0] <= now)
        return start, datetime(now.year, now.month, now.day) + timedelta(days=1)
    named = not text.isascii() or not EN_CUES.isdisjoint(_WORD.findall(text))
    habit = _HABIT.search(text) or (_TASTE.search(text) and year is None and not _WHICH_ONE.search(text))
    for pattern, span in NAMED if named and not habit else ():
        found = pattern.search(text)
        if found:  # "last summer", 上个夏天, "last Christmas": the latest one that is over; "next …": the coming one
            before = text[:found.start()].rstrip()
            if found.group(0).startswith("next ") or before.endswith("next"):
                return _coming(span, now)
            over = found.group(0).startswith(("last ", "上个")) or before.endswith("last")
            start, end = _latest(span, now, year, over)
            if before.endswith("since") and start <= now:  # "since New Year's": from then to now
                return start - timedelta(days=2), datetime(now.year, now.month, now.day) + timedelta(days=1)
            if pattern in LONG_PATTERNS and year is None and now - start < timedelta(days=31):
                start, end = span_dates(start.year - 1, span)
            if pattern in HOLIDAY_PATTERNS:  # plans are written before a holiday, what happened after it
                coming = None if year is not None or over or PAST.search(text) else _coming(span, now)
                if coming and coming[0] - now < timedelta(days=60):
                    # "What's on for Christmas Day?" in December: the coming one, not last year's
                    start, end = coming
                    if start - HOLIDAY_SLACK > now:
                        return None  # still to come: nothing was observed then
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
        y, m = divmod(now.year * 12 + now.month - 1 - (found.group(2) not in ("this", "the")), 12)
        window = _month_part(y, m + 1, found.group(1).rstrip("-"), now)
        return window if window and window[0] <= now else None  # "due by the end of the month": still to come
    found = _REL_QUARTER.search(text)
    if found:  # the quarter before this one, or this one (to now)
        back = 1 if (found.group(1) or "").startswith("上") or found.group(2) in ("last", "previous") else 0
        y, q = divmod(now.year * 4 + (now.month - 1) // 3 - back, 4)
        start = datetime(y, 3 * q + 1, 1)
        end = min(span_dates(y, (3 * q + 1, 1, 2, 31))[1] + timedelta(days=3),
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
