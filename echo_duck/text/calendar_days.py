"""The Gregorian dates of movable holidays, year by year: the Chinese lunar ones (春节, 元宵, 端午, 七夕, 中秋) from a
table, Easter by the Gregorian computus, and the ones named by a weekday of a month (Thanksgiving, Memorial Day,
Labor Day, Mother's Day, Father's Day). named_spans.py turns them into windows; outside the table's years
(1990-2060) a lunar holiday has no date here and named_spans.py falls back to the span of dates it can fall on.

The lunar table gives, per year, the Gregorian month and day of the first day of the first lunar month (春节), of
5/5 (端午), 7/7 (七夕) and 8/15 (中秋); it was computed with a Chinese calendar library and checked against the
``holidays`` package's China calendar for every year both cover (春节 2000-2060, 端午 and 中秋 2008-2060: no
difference). 元宵 (1/15) is 春节 + 14 days, 除夕 the day before 春节.
"""

from __future__ import annotations

from datetime import date, timedelta

__all__ = ["easter", "lunar_day", "nth_weekday"]

_LUNAR = (
    "1990:0127,0528,0826,1003 1991:0215,0616,0816,0922 1992:0204,0605,0805,0911 1993:0123,0624,0824,0930 "
    "1994:0210,0613,0813,0920 1995:0131,0602,0802,0909 1996:0219,0620,0820,0927 1997:0207,0609,0809,0916 "
    "1998:0128,0530,0828,1005 1999:0216,0618,0817,0924 2000:0205,0606,0806,0912 2001:0124,0625,0825,1001 "
    "2002:0212,0615,0815,0921 2003:0201,0604,0804,0911 2004:0122,0622,0822,0928 2005:0209,0611,0811,0918 "
    "2006:0129,0531,0731,1006 2007:0218,0619,0819,0925 2008:0207,0608,0807,0914 2009:0126,0528,0826,1003 "
    "2010:0214,0616,0816,0922 2011:0203,0606,0806,0912 2012:0123,0623,0823,0930 2013:0210,0612,0813,0919 "
    "2014:0131,0602,0802,0908 2015:0219,0620,0820,0927 2016:0208,0609,0809,0915 2017:0128,0530,0828,1004 "
    "2018:0216,0618,0817,0924 2019:0205,0607,0807,0913 2020:0125,0625,0825,1001 2021:0212,0614,0814,0921 "
    "2022:0201,0603,0804,0910 2023:0122,0622,0822,0929 2024:0210,0610,0810,0917 2025:0129,0531,0829,1006 "
    "2026:0217,0619,0819,0925 2027:0206,0609,0808,0915 2028:0126,0528,0826,1003 2029:0213,0616,0816,0922 "
    "2030:0203,0605,0805,0912 2031:0123,0624,0824,1001 2032:0211,0612,0812,0919 2033:0131,0601,0801,0908 "
    "2034:0219,0620,0820,0927 2035:0208,0610,0810,0916 2036:0128,0530,0828,1004 2037:0215,0618,0817,0924 "
    "2038:0204,0607,0807,0913 2039:0124,0527,0826,1002 2040:0212,0614,0814,0920 2041:0201,0603,0803,0910 "
    "2042:0122,0622,0822,0928 2043:0210,0611,0811,0917 2044:0130,0531,0731,1005 2045:0217,0619,0819,0925 "
    "2046:0206,0608,0808,0915 2047:0126,0529,0827,1004 2048:0214,0615,0816,0922 2049:0202,0604,0805,0911 "
    "2050:0123,0623,0823,0930 2051:0211,0613,0812,0919 2052:0201,0601,0801,0907 2053:0219,0620,0820,0926 "
    "2054:0208,0610,0810,0916 2055:0128,0530,0829,1005 2056:0215,0617,0817,0924 2057:0204,0606,0806,0913 "
    "2058:0124,0625,0825,1002 2059:0212,0614,0814,0921 2060:0202,0603,0802,0909 "
)
_COLUMNS = {"spring": 0, "dragon_boat": 1, "qixi": 2, "mid_autumn": 3}
_TABLE = {int(year): days.split(",") for year, days in (row.split(":") for row in "".join(_LUNAR).split())}


def lunar_day(name: str, year: int) -> date | None:
    """The Gregorian date of a lunar holiday in ``year`` ("spring", "lantern", "dragon_boat", "qixi",
    "mid_autumn"), or None outside the table's years."""
    row = _TABLE.get(year)
    if row is None:
        return None
    if name == "lantern":  # 正月十五: the first lunar month's fifteenth day
        return lunar_day("spring", year) + timedelta(days=14)
    month_day = row[_COLUMNS[name]]
    return date(year, int(month_day[:2]), int(month_day[2:]))


def easter(year: int) -> date:
    """Easter Sunday of ``year`` (Gregorian; the anonymous Gregorian computus)."""
    a, b, c = year % 19, year // 100, year % 100
    d, e = divmod(b, 4)
    f = (b + 8) // 25
    g = (b - f + 1) // 3
    h = (19 * a + b - d - g + 15) % 30
    i, k = divmod(c, 4)
    leap = (32 + 2 * e + 2 * i - h - k) % 7
    m = (a + 11 * h + 22 * leap) // 451
    month, day = divmod(h + leap - 7 * m + 114, 31)
    return date(year, month, day + 1)


def nth_weekday(year: int, month: int, weekday: int, n: int) -> date:
    """The ``n``-th ``weekday`` (Monday 0) of a month; ``n`` = -1: the last one."""
    if n > 0:
        first = date(year, month, 1)
        return first + timedelta(days=(weekday - first.weekday()) % 7 + 7 * (n - 1))
    last = date(year + month // 12, month % 12 + 1, 1) - timedelta(days=1)
    return last - timedelta(days=(last.weekday() - weekday) % 7)
