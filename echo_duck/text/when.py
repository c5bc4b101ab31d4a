"""What a question says about time, and which script a text is written in: small pure functions recall
hands to the ranking macro as parameters (sql/macros/40_recall.sql recall_fused).

``time_window(question, now)`` finds one time expression ("yesterday", "last week", "3 days ago", "in May", "上个月",
"两周前", "5月"; dates, holidays, seasons and parts of a month or year through named_days.py: "October 13, 2023",
"去年国庆", "last summer", "去年八月底"; spans up to now: "in the last 3 months", "over the past week" ("last week" alone is
the calendar week), 最近三天, "since May", 2023年以来; 一个多月前, 几个月前, 上上周, "the month before last", 去年的今天; "this
weekend" and 这周三 once they have begun, "two Sundays ago", "two weekends back", "the last 48 hours"; "two months
ago" covers that calendar month too) and returns the window it names around ``now`` (a day, a week or a month with some
slack at both ends), or None; a question in traditional characters reads as in simplified ones; a title in 《》 names
no time. Recall multiplies the score of memories observed inside the
window by 1 + δ: a soft boost, never a filter. ``wants_current(question)`` says whether it asks for the current
state ("now", "currently", "latest", "现在", "最近", …): only then does recall prefer newer memories among its
candidates. ``asks_when(question)`` says whether it asks when something happens ("When did…", 什么时候, 几点): recall then
prefers memories that state a time. A weekday alone (周五晚上, "on Sunday afternoons") names no window: in the questions
we have it is a habit far more often than a date (but "did I go to the gym on Tuesday?", past tense, is the last
one). ``text_script(text)`` is 1 when Han characters make up at least a third of the text's letters (a Latin word of
~4 letters counting as one), else 0; the vector arm judges a similarity against the memories of the same script.
sql/macros/20_ranking.sql text_script is the same rule.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta

from .named_days import EN_MONTH, MONTHS, PAST, PAST_TENSE, anchor_year, named_window, zh_month, zh_number
from .segment import simplified

__all__ = ["asks_when", "time_window", "wants_current", "text_script"]

_NUMBER = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
           "nine": 9, "ten": 10, "couple": 2, "few": 3, "several": 3}
_UNIT_DAYS = {"hour": 1 / 24, "hr": 1 / 24, "day": 1, "week": 7, "fortnight": 14, "month": 30.4, "year": 365,
              "天": 1, "日": 1, "周": 7, "星期": 7, "礼拜": 7, "个月": 30.4, "年": 365}

_THREE_DAYS = re.compile(r"大前天")
_DAY_BEFORE = re.compile(r"\bday before yesterday\b|(?<![之以])前天|^前日|(?<=[，,。\s])前日")  # 前日: Cantonese
_YESTERDAY = re.compile(r"\byesterday\b|\blast night\b|昨天|昨晚|昨夜|昨日|琴日|寻日")  # 琴日 / 尋日: Cantonese
_TODAY = re.compile(r"\btoday\b|\bthis (?:morning|afternoon|evening)\b|\btonight\b|今天|今早|今晚|今日(?!头条|说法)")
_WEEKDAYS = {"monday": 0, "tuesday": 1, "wednesday": 2, "thursday": 3, "friday": 4, "saturday": 5, "sunday": 6,
             "一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "六": 5, "日": 6, "天": 6}
_LAST_WEEKDAY = re.compile(r"\blast (monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b"
                           r"|(?<![马晚早])(上上|上)(?:个)?(?:周|星期|礼拜)([一二三四五六日天])")
_COUNT = r"(\d+|an?|one|two|three|four|five|six|seven|eight|nine|ten|couple|few|several)(?: of)?"
_AGO = re.compile(r"\b" + _COUNT + r" (day|week|fortnight|month|year)s?( or so)? (?:ago|back)\b")
# 两周前, 半个月前, and a count with 多 (more than: 一个多月前, 十多天前, 一年多前) or 几 (a few: 几个月前)
# 月 only after 个 (三月前 is "before March"); 日 not right after a month (3月10日前 is a date)
_ZH_UNIT = (r"(天|(?<!月\d)(?<!月\d\d)(?<!月[一二三四五六七八九十])(?<!月[一二三四五六七八九十]{2})日|周|星期|礼拜"
            r"|(?:(?<=个)|(?<=个多))月|年)")
_ZH_AGO = re.compile(r"(?<![\d一两二三四五六七八九十几])(\d+|[一两二三四五六七八九十]{1,3}|半|几)\s*(多)?(个)?(多)?"
                     + _ZH_UNIT + r"(多)?前")
# A span up to now: "in the last 3 months", "over the past few days", 最近三天, 过去一周, 近两个月 (not "the last two
# weeks of August", nor 将近两年, a length)
_RECENT = re.compile(r"\b(?:(?:the|these|in|over|during|within|for) (?:past|last|previous)"
                     r"|(?<!my )(?<!his )(?<!her )(?<!our )(?<!your )(?<!their )past) " + _COUNT
                     + r" (hour|hr|day|week|month|year)s\b(?!\s+(?:of|before|after|until)\b|\s+in\s+(?:" + EN_MONTH
                     + r"|(?:19|20)\d\d)\b)")
# One unit up to now, no count: "in the past month", "over the last week", "this past year" (a rolling span; "last
# month" alone is the calendar month before this one); not "the last week of August", nor "the last day" (a count
# of one day names no span a user asks about)
_RECENT_ONE = re.compile(r"\b(?:the|this) (?:past|last|previous) (week|fortnight|month|year)\b"
                         r"(?!\s+(?:of|before|after|until|i|we|you|he|she|they)\b"
                         r"|\s+in\s+(?:" + EN_MONTH + r"|(?:19|20)\d\d)\b)")
_ZH_RECENT = re.compile(r"(?:最近|过去|(?<![将接靠附邻亲几逼临])近)(?:的|这)?\s*(\d{1,3}(?!\d)|[一两二三四五六七八九十]{1,3}|半|几)\s*(多)?(个)?(多)?"
                        + _ZH_UNIT + r"(?!前|后|多前|级)")
_ASKS = re.compile(r"什么|哪|谁|怎么|多少|吗|呢|如何|为何|是否|啥|咋|多久|么|没有|是不是|几[号点]")  # other than 几
_VERB_DE = re.compile(r"[^的，,。？?\s]{1,2}的")  # 几年前去的日本: 几 asks when the verb takes 的
_YEAR_AGO_TODAY = re.compile(r"(?:[去前]年|(?<![\d一两二三四五六七八九十])(?:\d{1,2}|[一两二三四五六七八九十]{1,3})年前)的?今天"
                             r"|\bthis day (?:last year|(\w+) years ago)\b|\b(\w+) years? ago today\b")
_FEW_DAYS = re.compile(r"(?<!提)前两天|(?<!提)前几天|几天前|这两天|这几天|\bthe other day\b")
_WEEK_BEFORE_LAST = re.compile(r"\bthe week before last\b|上上(?:个)?(?:周|星期|礼拜)(?![一二三四五六日天末])")
_MONTH_BEFORE_LAST = re.compile(r"\bthe month before last\b|上上个?月")
_LAST_WEEKEND = re.compile(r"(?<![马晚早])(上?)(?:上周末|上个周末|上星期天|上周[日六])|\bthe weekend before last\b"
                           r"|\b(?:last|this past|the past) weekend\b")
# this weekend (asked on it: this one; else the last one in a past-tense question; none when it is still to come);
# this Saturday, 这周六 (that day of this week; none when still to come); "two Sundays ago", "the Saturday before
# last" (two weeks back)
_THIS_WEEKEND = re.compile(r"\bthis weekend\b|(?<![马晚早])(?:这个?|本)周末")
_THIS_WEEKDAY = re.compile(r"\bthis (monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b(?!s)"
                           r"|(?<![马晚早])(?:这个?|本)(?:周|星期|礼拜)([一二三四五六日天])")
_WEEKENDS_AGO = re.compile(r"\b(two|three|four|2|3|4) weekends (?:ago|back)\b|(?<!上)(上上|上上上)(?:个)?周末")
_WEEKDAY_TWO_BACK = re.compile(r"\b(?:two|2) (monday|tuesday|wednesday|thursday|friday|saturday|sunday)s ago\b"
                               r"|\bthe (monday|tuesday|wednesday|thursday|friday|saturday|sunday) before last\b")
_PLAN = re.compile(r"\b(?:for|plans?|planned|planning|going to|will|gonna)\b|打算|计划|准备|安排|要|(?<![大节简公合条])约")
_LAST_WEEK = re.compile(r"\b(?:last|past) week\b(?!\s+of\b)|(?<![马晚早])上周|上星期|上个星期|上个?礼拜")
_THIS_WEEK = re.compile(r"\bthis week\b|这周|本周|这个星期")
_LAST_MONTH = re.compile(r"\b(?:last|past) month\b(?!\s+of\b)|上个月|(?<!马)上月")
_LATER = re.compile(r"\blater (?:this|in the) (?:week|month|year)\b|\bthe rest of (?:this|the) (?:week|month|year)\b")
_THIS_MONTH = re.compile(r"\bthis month\b|这个月|本月")
_IN_MONTH = re.compile(r"\b(in|during|on|since|of|from|last|this|past)\s+(?:early |late |mid-?)?("
                       + EN_MONTH + r")\b(?:\s+(\d{4}))?")
# from one month to another: "between March and May", "from March to May", 3月到5月, 三月至五月
_EN_MONTH_RANGE = re.compile(r"\b(?:between|from)\s+(" + EN_MONTH + r")\s+(?:and|to|until|till|through)\s+("
                             + EN_MONTH + r")\b|\b(?:in|during|over|from) (" + EN_MONTH + r")\s*[-–]\s*(" + EN_MONTH
                             + r")\b")
_ZH_MONTH_RANGE = re.compile(r"(?<![\d个])(\d{1,2}|[一二三四五六七八九十]{1,2})\s*月份?\s*(?:到|至|~|-|—)\s*"
                             r"(\d{1,2}|[一二三四五六七八九十]{1,2})\s*月(?!\d|[一二三四五六七八九十]|前)")
_MAY_VERB = re.compile(r"\s+(?:i|we|you|he|she|they|it|be|have|not|also|well|just|still|help|need|take|make|work|"
                       r"get|come|go|cause|mean|seem|sound|look|feel|change|affect|hurt|cost|last|want)\b")
# a weekday that a past-tense question names: "did I go to the gym on Tuesday?", "the bar we went to friday night",
# 周二开会的时候老板说了什么 (the latest one; "on Tuesdays", 每周三, 一般 are habits, and a weekday in a question in the
# present names no time)
_DAY_NAME = r"(monday|tuesday|wednesday|thursday|friday|saturday|sunday)"
_ON_WEEKDAY = re.compile(r"\b(?:on|this past|that) " + _DAY_NAME + r"\b(?!s)|\b" + _DAY_NAME
                         + r" (?:night|morning|afternoon|evening)\b|(?<![上这本下每])(?:周|星期|礼拜)([一二三四五六日天])"
                           r"(?![一二三四五六日天])")
_USUAL = re.compile(r"一般|通常|平时|经常|总是|每|\b(?:usually|normally|always|often|every)\b")
_ZH_MONTH = re.compile(r"(?<![\d个])(\d{1,2})\s*月(?!前)")
# From a month or a year to now: "since May", "since 2023", 五月以来, 2023年以来, 从三月份开始
# right after 五月 / 5月: 五月以来, 5月开始, 三月份到现在
_SINCE_AFTER = re.compile(r"\s*份?\s*(?:以来|开始|起(?![飞诉草床身来码])|(?:到|至)(?:现在|今天|目前|今))")
_SINCE_YEAR = re.compile(r"\bsince\s+(?:19|20)\d\d\b|(?:19|20)\d\d\s*年\s*(?:以来|开始|起(?![飞诉草床身来码]))")

_CURRENT = re.compile(r"\b(?:now|currently|current|these days|latest|most recent|recently|still|anymore|any more|"
                      r"nowadays|at the moment|today)\b|现在|目前|最近|如今|还|最新|这阵子|近来")
_AUX = r"(?:is|are|was|were|do|does|did|will|would|has|have|had|can|could|should)"
_ASKS_WHEN = re.compile(r"^\W*when\b|\b(?:by|since|until|till) when\b|\bwhen\s*[?,]|\b(?:and|or|but|so) when " + _AUX
                        + r"\b|\b(?:what|which) (?:year|month|day|date)\b|\bwhat time " + _AUX + r"\b|\bhow long ago\b"
                        r"|什么时候|哪一?年|哪一?天|哪个月|几月|几号|几点|何时")

_TITLE = re.compile(r"《[^》]{0,80}》")
_HAN = re.compile("[\u3400-\u9fff\uf900-\ufaff]")
_HAN_RUN = re.compile("[\u3400-\u9fff\uf900-\ufaff]+")
_LATIN = re.compile("[A-Za-z]")


def text_script(text: str | None) -> int:
    """1 when 8 × Han characters >= Latin letters and there is at least one Han character, else 0
    (Han at least a third of the letters, a Latin word of ~4 letters counting as one)."""
    if not text or text.isascii():
        return 0
    han = len(_HAN.findall(text))
    return 1 if han > 0 and 8 * han >= len(_LATIN.findall(text)) else 0


def _read(question: str) -> str:
    """The question lower-cased, its Han runs in simplified characters: 現在 and 上個月 read as 现在 and 上个月."""
    s = question.lower()
    return s if s.isascii() else _HAN_RUN.sub(lambda m: simplified(m.group()), s).replace("\u2019", "'")


def wants_current(question: str) -> bool:
    """Whether the question asks for the current state of something (a cue word in English or Chinese)."""
    return bool(_CURRENT.search(_read(question)))


def asks_when(question: str) -> bool:
    """Whether the question asks when something happens ("When did…", "…, and when?", "by when", "what year",
    "what time is…", "how long ago", 什么时候, 哪天, 几月, 几号, 几点, 何时). "What did she say when…" asks what, not
    when. Recall then prefers memories that state a time (sql/macros/20_ranking.sql states_time)."""
    return bool(_ASKS_WHEN.search(_read(question)))


def time_window(question: str, now: datetime) -> tuple[datetime, datetime] | None:
    """[start, end) of the time ``question`` names, relative to ``now``, or None when it names none (or
    names a time out of the calendar's range, "9999999 years ago")."""
    try:
        return _window(question, now)
    except (OverflowError, ValueError):
        return None


def _window(question: str, now: datetime) -> tuple[datetime, datetime] | None:
    s = _TITLE.sub(" ", _read(question))  # a title names no time: 《去年烟花特别多》
    now = now.replace(tzinfo=None)  # the store's clock is naive UTC; a caller's aware time reads as its wall time
    today = datetime(now.year, now.month, now.day)

    def days_back(first: float, last: float) -> tuple[datetime, datetime]:
        return today - timedelta(days=first), today - timedelta(days=last) + timedelta(days=1)

    year_ago = _YEAR_AGO_TODAY.search(s)
    back = _years_back(year_ago) if year_ago else None
    if back:
        leap_day = (today.month, today.day) == (2, 29)
        day = today - timedelta(days=365 * back + 1) if leap_day else today.replace(year=today.year - back)
        return day - timedelta(days=1), day + timedelta(days=2)
    if _THREE_DAYS.search(s):
        return days_back(3, 3)
    if _DAY_BEFORE.search(s):
        return days_back(2, 2)
    if _YESTERDAY.search(s):
        return days_back(1, 1)
    if _TODAY.search(s):
        return days_back(0, 0)
    ago = _AGO.search(s) or _ZH_AGO.search(s)
    span = _span_days(ago) if ago else None
    if span is not None and span[1] == _UNIT_DAYS["年"] and not (span[2] or span[3]):
        named = named_window(s, now)  # "Christmas Eve two years ago", 两年前的春节: that year's (anchor_year)
        if named is not None:
            return named
        if _IN_MONTH.search(s) or _ZH_MONTH.search(s) or zh_month(s):  # "in May two years ago": that May, below
            span = None
    if span is not None:
        n, unit, more, few = span
        if few:  # 几个月前: two to five of them; 几天前, "a few days ago": the last week
            return days_back(7, 0) if unit == 1 else days_back(5 * unit, 2 * unit)
        if more:  # 一个多月前: between one and two of them; 十多天前: ten to twenty
            return days_back((n + _more(n)) * unit, n * unit)
        slack = max(1.0, 0.5 * unit if n == 1 and ago.re is _AGO else 0.25 * n * unit)
        start, end = days_back(n * unit + slack, max(n * unit - slack, 0))
        if unit == _UNIT_DAYS["个月"] and n == int(n):  # "two months ago" may mean that calendar month: both
            calendar = _month_back(now, int(n))
            start, end = min(start, calendar[0]), max(end, calendar[1])
        return start, end
    named = named_window(s, now)
    if named is not None:
        return named
    recent = _RECENT.search(s) or _RECENT_ONE.search(s) or _ZH_RECENT.search(s)
    span = _span_days(recent) if recent else None
    if span is not None:
        n, unit, more, few = span
        length = (5 if few else n + _more(n) if more else n) * unit
        return days_back(length + max(1.0, 0.1 * length), 0)
    if _FEW_DAYS.search(s):  # the last week: "the other day" is two to seven days back as often as one or two
        return days_back(7, 0)
    weekday = _LAST_WEEKDAY.search(s)
    if weekday:  # "last Monday": the latest one before today; 上周三: last week's
        english, weeks, chinese = weekday.groups()
        if english:  # said two or three days after it, many mean the one a week earlier: both
            back = (today.weekday() - _WEEKDAYS[english] - 1) % 7 + 1
            return days_back(back + 8 if back <= 3 else back + 1, back - 1)
        back = today.weekday() + 7 * len(weeks) - _WEEKDAYS[chinese]  # 上周三: last week's; 上上周三: the week before's
        return days_back(back + 1, back - 1)
    if _WEEK_BEFORE_LAST.search(s):
        return _week_back(today, 2)
    if _MONTH_BEFORE_LAST.search(s):
        return _month_back(now, 2)
    weekends = _WEEKENDS_AGO.search(s)
    if weekends:  # "two weekends ago": the latest weekend before today, a week earlier per extra one
        count, repeated = weekends.groups()
        n = len(repeated) if repeated else int(count) if count.isdigit() else _NUMBER[count]
        saturday = today - timedelta(days=(today.weekday() - 5) % 7 + 7 * (n - 1))
        return saturday - timedelta(days=1), saturday + timedelta(days=3)
    two_back = _WEEKDAY_TWO_BACK.search(s)
    if two_back:  # the latest such day before today, a week earlier
        back = (today.weekday() - _WEEKDAYS[two_back.group(1) or two_back.group(2)] - 1) % 7 + 8
        return days_back(back + 1, back - 1)
    weekend = _LAST_WEEKEND.search(s)
    if weekend:  # 上上周末 / "the weekend before last weekend": a week earlier
        earlier = 7 if weekend.group(1) or "before" in weekend.group(0) else 0
        monday = today - timedelta(days=today.weekday() + earlier)
        return monday - timedelta(days=3), monday + timedelta(days=1)
    if _LAST_WEEK.search(s):
        return _week_back(today, 1)
    if _THIS_WEEKEND.search(s):
        saturday = today + timedelta(days=5 - today.weekday())
        if today.weekday() >= 5:  # asked on it: Saturday to today
            return saturday - timedelta(days=1), today + timedelta(days=1)
        if not PAST.search(s) or _PLAN.search(s):  # still to come: nothing was observed then
            return None
        saturday -= timedelta(days=7)  # "what did I do this weekend?" on a Monday: the one just past
        return saturday - timedelta(days=1), saturday + timedelta(days=3)
    this_day = _THIS_WEEKDAY.search(s)
    if this_day:  # that day of this week (Monday to Sunday), unless it is still to come
        day = today + timedelta(days=_WEEKDAYS[this_day.group(1) or this_day.group(2)] - today.weekday())
        return (day - timedelta(days=1), day + timedelta(days=2)) if day <= today else None
    if _THIS_WEEK.search(s):
        return today - timedelta(days=today.weekday()), today + timedelta(days=1)
    if _LAST_MONTH.search(s):
        return _month_back(now, 1)
    if _LATER.search(s):  # "later this month": still to come
        return None
    if _THIS_MONTH.search(s):
        return datetime(now.year, now.month, 1), today + timedelta(days=1)
    on_day = _ON_WEEKDAY.search(s)
    if on_day and (PAST_TENSE.search(s) or on_day.group(3) and "了" in s) and not _USUAL.search(s):
        back = (today.weekday() - _WEEKDAYS[next(g for g in on_day.groups() if g)] - 1) % 7 + 1  # the latest one
        return days_back(back + 1, back - 1)
    span = _EN_MONTH_RANGE.search(s) or _ZH_MONTH_RANGE.search(s)
    named = span and [g for g in span.groups() if g]
    months = named and (MONTHS.get(named[0]) or zh_number(named[0]), MONTHS.get(named[1]) or zh_number(named[1]))
    if months and all(m and 1 <= m <= 12 for m in months) and months[0] <= months[1]:
        year = anchor_year(s, now) or (now.year if months[0] <= now.month else now.year - 1)
        end_year, end_month = _add_months(year, months[1], 1)
        return datetime(year, months[0], 1) - timedelta(days=2), datetime(end_year, end_month, 1) + timedelta(days=2)
    month = year = None
    since = False  # "since May", 五月以来: from then to now
    in_month = _IN_MONTH.search(s)
    if in_month:
        month, year = MONTHS[in_month.group(2)], int(in_month.group(3)) if in_month.group(3) else None
        since = in_month.group(1) == "since"
        if in_month.group(1) in ("this", "last", "past") and in_month.group(2) == "may" and _MAY_VERB.match(
                s, in_month.end()):  # "this may help", "the last may be late": a verb, not the month
            month = None
        elif in_month.group(1) in ("last", "past") and year is None and month >= now.month:  # "last October"
            year = now.year - 1
    else:
        found = (_ZH_MONTH.search(s), zh_month(s))  # 6月, else 六月 (宝宝18月大了，六月份…: June)
        numbered = next((m for m in found if m and 1 <= (zh_number(m.group(1)) or 0) <= 12), None)
        if numbered:
            month = zh_number(numbered.group(1))
            since = _SINCE_AFTER.match(s, numbered.end()) is not None
    if month is not None and year is None:  # "去年六月", "2023年5月", "in May of 2023": the year the question names
        year = anchor_year(s, now)
    if month is None:  # a year alone: 去年, this year, 2023年, "in 2023", 前年
        year = anchor_year(s, now)
        since = _SINCE_YEAR.search(s) is not None
        if year is None or not 1 <= year <= now.year:  # 明年 / next year: nothing was observed then
            return None
        end = today + timedelta(days=1)
        return datetime(year, 1, 1), end if since else min(datetime(year + 1, 1, 1), end)
    if year is None:
        year = now.year if month <= now.month else now.year - 1
    if not 1 <= year <= 9998:
        return None
    next_year, next_month = _add_months(year, month, 1)
    if since and datetime(year, month, 1) <= today:  # "since May": from its start to now
        return datetime(year, month, 1) - timedelta(days=2), today + timedelta(days=1)
    return datetime(year, month, 1) - timedelta(days=2), datetime(next_year, next_month, 1) + timedelta(days=2)


def _years_back(found: re.Match) -> int | None:
    """How many years back 去年的今天 (1), 前年的今天 (2), 三年前的今天, "a year ago today", "this day two years ago"
    are; None for a count it cannot read ("many years ago today")."""
    text = found.group(0)
    count = found.group(1) or found.group(2)
    if count:
        return int(count) if count.isdigit() else _NUMBER.get(count)
    if text.startswith("去") or "last year" in text:
        return 1
    return 2 if text.startswith("前") else zh_number(text.split("年")[0])


def _more(n: float) -> int:
    """How many more 多 may add to a count: 一个多 up to two, 十多 up to twenty, 一百多 up to two hundred."""
    return 10 ** (len(str(int(n))) - 1) if n >= 10 and n % 10 == 0 else 1


def _span_days(found: re.Match) -> tuple[float, float, bool, bool] | None:
    """(count, days per unit, "more than" (多), "a few" (几, few, several)) of an _AGO / _ZH_AGO / _RECENT /
    _ZH_RECENT match, or None when it counts nothing (0 days ago) or its 几 asks when (你几年前去的日本？)."""
    if found.re is _RECENT_ONE:  # English: one unit, no count
        return 1, _UNIT_DAYS[found.group(1)], False, False
    if found.re in (_AGO, _RECENT):  # English: count, unit
        count, unit = found.group(1), found.group(2)
        n = int(count) if count.isdigit() else _NUMBER[count]
        return (n, _UNIT_DAYS[unit], False, count in ("few", "several")) if n else None
    count, more1, ge, more2, unit, *more3 = found.groups()
    asks_when = not _ASKS.search(found.string) and _VERB_DE.match(found.string, found.end())
    if count == "几" and found.re is _ZH_AGO and asks_when:
        return None  # 你几年前去的日本？ asks how long ago
    n = 3 if count == "几" else 0.5 if count == "半" else zh_number(count)
    if not n:
        return None
    return n, _UNIT_DAYS["个月" if unit == "月" else unit], bool(more1 or more2 or any(more3)), count == "几"


def _add_months(year: int, month: int, k: int) -> tuple[int, int]:
    t = year * 12 + (month - 1) + k
    return t // 12, t % 12 + 1


def _week_back(today: datetime, weeks: int) -> tuple[datetime, datetime]:
    """The calendar week ``weeks`` before this one (Monday to Sunday), two days' slack either side."""
    start = today - timedelta(days=today.weekday() + 7 * weeks)
    return start - timedelta(days=2), start + timedelta(days=9)


def _month_back(now: datetime, months: int) -> tuple[datetime, datetime]:
    """The calendar month ``months`` before this one, three days' slack either side."""
    year, month = _add_months(now.year, now.month, -months)
    next_year, next_month = _add_months(now.year, now.month, 1 - months)
    return datetime(year, month, 1) - timedelta(days=3), datetime(next_year, next_month, 1) + timedelta(days=3)
