"""The calendar spans a question can name by a word: holidays and festivals (fixed-date ones as (month, day) spans,
movable ones through calendar_days.py), school breaks, seasons, and parts and quarters of a year, each with the pattern
that names it (English, and Chinese as when.py reads it: lower-cased, simplified). named_days.py finds them in a
question and picks the year; this module only says what each one is.

A span is (first month, first day, months later it ends, last day), and may run into the next year; a movable holiday
is a function of the year (``_around``): its date with days of slack before and after; a lunar one outside
calendar_days' table takes the span of dates it can fall on. ``span_dates(year, s)`` is the [start, end) of ``s`` in
``year``. A holiday's window then reaches HOLIDAY_SLACK to either side (named_days.py): what people write about a
holiday spreads from plans before it to reports after it.
"""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta
from typing import Callable, Union

from .calendar_days import easter, lunar_day, nth_weekday

__all__ = ["AS_TIME", "EN_CUES", "FALL_TERM", "HOLIDAY_PATTERNS", "HOLIDAY_SLACK", "LONG_PATTERNS", "NAMED",
           "SPRING_TERM", "Span", "days_in", "span_dates"]

# 国庆 / 五一 as a time: at the start, after a word that dates it (去年国庆, 过五一), or with 节 / 假 / 期间 after it;
# not inside a name or a street (张国庆, 五一路, 一五一十).
AS_TIME = r"(?:(?<![\u4e00-\u9fff]){0}|(?<=[年个的过是在到])\s*{0}|{0}(?=节|假|长假|期间|黄金周|的时候))"

# (month, day) spans: (first month, first day, months later the span ends, last day); a span may run into the next
# year. A movable holiday is a function of the year instead (_around): its date (calendar_days.py) with days of slack
# before and after; a lunar one outside calendar_days' table takes the span of dates it can fall on.
Span = Union[tuple[int, int, int, int], Callable[[int], tuple[datetime, datetime]]]


def _around(day_of: Callable[[int], date | None], before: int, after: int,
            fallback: tuple[int, int, int, int] | None = None) -> Callable[[int], tuple[datetime, datetime]]:
    def window(year: int) -> tuple[datetime, datetime]:
        day = day_of(year)
        if day is None:
            return span_dates(year, fallback)
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
    # days of the lunar twelfth month, from 春节's date: 腊八 (12/8) 21-22 days before it, 小年 (12/23 or 12/24) 6-8
    (re.compile(AS_TIME.format("腊八") + r"(?!粥)"), _around(_lunar("spring", -22), 1, 1, (1, 1, 0, 29))),
    (re.compile(AS_TIME.format("小年") + r"(?![轻纪])"), _around(_lunar("spring", -8), 1, 1, (1, 13, 1, 13))),
    (re.compile(r"除夕|大年三十|大年夜|\bchinese new year'?s eve\b"), _around(_lunar("spring", -1), 1, 1, (1, 20, 1, 20))),
    (re.compile(r"大年初一"), _around(_lunar("spring"), 1, 1, (1, 21, 1, 21))),
    (re.compile(r"春节|过年|大年初|农历新年|农历年|\bchinese new year\b|\blunar new year\b|\bspring festival\b"),
     _around(_lunar("spring"), 2, 7, (1, 20, 1, 21))),
    (re.compile(r"元宵节|正月十五"), _around(_lunar("lantern"), 1, 2, (2, 4, 1, 6))),
    (re.compile(r"正月"), _around(_lunar("spring"), 0, 29, (1, 21, 2, 20))),  # the first lunar month
    (re.compile(r"七夕"), _around(_lunar("qixi"), 1, 2, (7, 28, 1, 30))),  # before 情人节: 七夕情人节 is in August
    (re.compile(r"情人节|\bvalentine'?s?\b"), (2, 13, 0, 15)),
    (re.compile(r"元旦|\bnew year'?s day\b"), (1, 1, 0, 3)),
    (re.compile(r"\bnew year'?s eve\b|跨年夜|跨年那[天晚]|跨年的时候"), (12, 30, 1, 1)),
    (re.compile(r"\bnew year'?s\b"), (1, 1, 0, 2)),  # "since New Year's"
    (re.compile(r"\baustralia day\b"), (1, 25, 0, 28)),
    (re.compile(r"\bsuper bowl\b"), _around(lambda year: nth_weekday(year, 2, 6, 2), 8, 1)),  # a first or second Sunday
    (re.compile(r"二二八|228(?=连假|假期|那|的时候)"), (2, 27, 0, 28)),  # Taiwan's Peace Memorial Day, 28 February
    (re.compile(r"妇女节|三八节|\bwomen'?s day\b"), (3, 7, 0, 9)),
    (re.compile(r"\bst\.? (?:patrick|paddy)'?s\b|\bpaddy'?s day\b"), (3, 17, 0, 17)),
    (re.compile(r"植树节"), (3, 12, 0, 12)),
    (re.compile(r"清明"), (4, 3, 0, 7)),
    (re.compile(r"\beaster\b"), _around(easter, 3, 2)),  # Good Friday to Easter Monday, a day either side
    (re.compile(AS_TIME.format("五一") + r"(?![路广大])|劳动节|\bmay day\b"), (4, 30, 1, 6)),
    (re.compile(r"佛诞|浴佛节|\bvesak\b"), _around(_lunar("dragon_boat", -27), 0, 1, (5, 1, 0, 29))),  # 4/8: 26-27 days
    (re.compile(r"端午|\bdragon boat\b"), _around(_lunar("dragon_boat"), 2, 3, (5, 27, 1, 26))),
    (re.compile(r"\bmothering sunday\b"), _around(lambda year: easter(year) - timedelta(days=21), 1, 1)),  # UK
    (re.compile(r"母亲节|\bmother'?s'? day\b"), _around(lambda year: nth_weekday(year, 5, 6, 2), 1, 2)),
    (re.compile(r"\bmemorial day\b"), _around(lambda year: nth_weekday(year, 5, 0, -1), 3, 1)),
    (re.compile(r"(?<!\d)520(?=那天|当天|那晚|的时候|节)|网络情人节"), (5, 20, 0, 20)),
    (re.compile(r"儿童节|" + AS_TIME.format("六一") + r"(?![路广大])|\bchildren'?s day\b"), (5, 31, 1, 2)),
    (re.compile(r"父亲节|\bfather'?s'? day\b"), _around(lambda year: nth_weekday(year, 6, 6, 3), 1, 2)),
    (re.compile(r"\bindependence day\b|\bfourth of july\b|\bjuly 4th\b"), (7, 3, 0, 6)),
    (re.compile(AS_TIME.format("七一") + r"(?![路广大])|回归纪念日"), (7, 1, 0, 1)),  # Hong Kong's 1 July
    (re.compile(r"\b(?:king|queen)'?s birthday\b"), _around(lambda year: nth_weekday(year, 6, 0, 2), 9, 1)),
    (re.compile(r"\b(?:august|summer) bank holiday\b"), _around(lambda year: nth_weekday(year, 8, 0, -1), 2, 0)),
    (re.compile(r"\blabou?r day\b"), _around(lambda year: nth_weekday(year, 9, 0, 1), 3, 1)),
    (re.compile(r"教师节|\bteachers'? day\b"), (9, 10, 0, 10)),
    (re.compile(r"中秋|八月十五|\bmid-?autumn\b"), _around(_lunar("mid_autumn"), 2, 3, (9, 6, 1, 9))),
    (re.compile(r"重阳|九月初九"), _around(_lunar("mid_autumn", 23), 0, 1, (10, 1, 0, 31))),  # 9/9: 23-24 days on
    (re.compile(AS_TIME.format("国庆") + r"|十一假期|十一长假|十一黄金周|\bnational day\b"), (9, 28, 1, 9)),
    (re.compile(r"双十节"), (10, 9, 0, 12)),  # Taiwan's National Day, 10 October
    (re.compile(r"\bhalloween\b"), (10, 30, 1, 2)),
    (re.compile(r"双十一|双11|光棍节"), (11, 10, 0, 13)),
    (re.compile(r"双十二|双12"), (12, 11, 0, 13)),
    (re.compile(r"\bblack friday\b"), _around(lambda year: _thanksgiving(year) + timedelta(days=1), 1, 3)),
    (re.compile(r"\bthanksgiving\b"), _around(_thanksgiving, 1, 4)),
    (re.compile(r"冬至"), (12, 20, 0, 24)),
    (re.compile(r"平安夜|\bchristmas eve\b"), (12, 24, 0, 24)),
    (re.compile(r"\bboxing day\b"), (12, 26, 0, 26)),
    (re.compile(r"圣诞|\bchristmas\b(?! island)|\bxmas\b|\b(?:over|during|for|since|after) the holidays\b"
                r"|\bholiday season\b"), (12, 23, 0, 28)),
]
# School breaks, and seasons only where the text says which one (last / this / past summer, the summer of 2024,
# 去年 / 今年 / 这个 / 上个 夏天): "in the winter" and 夏天他最馋什么 say when something tends to happen, not when.
_EN_SEASON = r"\b(?:last|this|past|previous)\s+{0}\b|\b{0}\s+(?:of\s+)?(?:(?:19|20)\d\d|'\d\d)\b"
_ZH_SEASON = r"(?:去年|今年|前年|明年|这个|上个)(?:的)?{0}"
# A school term: autumn from late August to the exams in January, spring from January to June (China's and the
# United States' calendars both inside)
FALL_TERM, SPRING_TERM = (8, 20, 5, 20), (1, 10, 5, 30)
_SEASONS: list[tuple[re.Pattern, Span]] = [
    (re.compile(r"\b(?:fall|autumn) (?:semester|term)\b|秋季学期"), FALL_TERM),
    (re.compile(r"\bspring (?:semester|term)\b|春季学期"), SPRING_TERM),
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

NAMED = _HOLIDAYS + _SEASONS + _YEAR_PARTS + _LONG_PARTS
HOLIDAY_PATTERNS = frozenset(pattern for pattern, _ in _HOLIDAYS)
LONG_PATTERNS = frozenset(pattern for pattern, _ in _LONG_PARTS)
# A holiday's window reaches a week to either side of its days: in the recall sets, what people write about a holiday
# spreads from plans a week or more before to reports days after (chosen on zh_fit and bilingual, see RANKING.md)
HOLIDAY_SLACK = timedelta(days=7)
# An English text names none of them without one of these words (a set lookup is cheaper than 25 searches).
EN_CUES = frozenset("new year years eve chinese lunar spring valentine valentines easter may dragon independence "
                     "fourth july national halloween thanksgiving christmas xmas summer winter autumn fall "
                     "early beginning start mid late end black friday memorial labor labour mother mothers "
                     "father fathers half q1 q2 q3 q4 quarter women womens children childrens teachers st patrick "
                     "patricks paddy paddys bank boxing holidays holiday mothering australia super bowl king kings "
                     "queen queens vesak semester term".split())


def span_dates(year: int, s: Span) -> tuple[datetime, datetime]:
    """[start, end) of span ``s`` in ``year``."""
    if callable(s):
        return s(year)
    month, day, months_later, last_day = s
    start = datetime(year, month, day)
    end_year, end_month = divmod(year * 12 + month - 1 + months_later, 12)
    end_month += 1
    last = min(last_day, days_in(end_year, end_month))
    return start, datetime(end_year, end_month, last) + timedelta(days=1)


def days_in(year: int, month: int) -> int:
    nxt = datetime(year + (month == 12), month % 12 + 1, 1)
    return (nxt - timedelta(days=1)).day
