"""What a question says about time (echo_duck/text/when.py), and the script rule that Python and SQL share.

Time: the window a question names, relative to the store's clock, in English and Chinese; never an
error, whatever the text. Script: text_script (Python, the write path) and content_script (SQL, the
analysts' macros and the in-transaction recall) must agree on every text, or the two recall paths
would judge a similarity against different memories.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import echo_duck
from echo_duck.text.when import asks_when, text_script, time_window, wants_current

NOW = datetime(2026, 3, 20, 10, 0)  # a Friday
SETS = Path(__file__).resolve().parent.parent / "data_fixtures" / "recall_sets"


@pytest.mark.parametrize("question, start, end", [
    ("what did I eat yesterday?", datetime(2026, 3, 19), datetime(2026, 3, 20)),
    ("我昨天吃了什么", datetime(2026, 3, 19), datetime(2026, 3, 20)),
    ("and the day before yesterday?", datetime(2026, 3, 18), datetime(2026, 3, 19)),
    ("what did I buy last week?", datetime(2026, 3, 7), datetime(2026, 3, 18)),
    ("上周去了哪里", datetime(2026, 3, 7), datetime(2026, 3, 18)),
    ("three weeks ago I went somewhere", datetime(2026, 2, 21, 18), datetime(2026, 3, 5, 6)),
    ("两周前买了什么", datetime(2026, 3, 2, 12), datetime(2026, 3, 10, 12)),
    ("上个月的体检结果", datetime(2026, 1, 29), datetime(2026, 3, 4)),
    ("what happened in May?", datetime(2025, 4, 29), datetime(2025, 6, 3)),  # May of last year: not yet this year
    ("what happened in March 2026?", datetime(2026, 2, 27), datetime(2026, 4, 3)),
    ("5月做了什么", datetime(2025, 4, 29), datetime(2025, 6, 3)),
    ("去年的旅行", datetime(2025, 1, 1), datetime(2026, 1, 1)),
    ("this month", datetime(2026, 3, 1), datetime(2026, 3, 21)),
    # traditional characters read as simplified ones
    ("上個月的體檢結果", datetime(2026, 1, 29), datetime(2026, 3, 4)),
    ("兩週前買了什麼", datetime(2026, 3, 2, 12), datetime(2026, 3, 10, 12)),
    # dates, holidays, seasons, parts of a month or year (named_days.py)
    # a date, with two days' slack either side; without a year, the latest one up to now
    ("What painting did she show him on October 13, 2023?", datetime(2023, 10, 11), datetime(2023, 10, 16)),
    ("What did Gina find for her store on 1 February, 2023?", datetime(2023, 1, 30), datetime(2023, 2, 4)),
    ("3月12号做了什么", datetime(2026, 3, 10), datetime(2026, 3, 15)),
    ("十二月二十五号那天", datetime(2025, 12, 23), datetime(2025, 12, 28)),
    ("去年3月12日", datetime(2025, 3, 10), datetime(2025, 3, 15)),
    # holidays (lunar ones: every Gregorian date they can fall on), anchored by the year the question names
    ("去年国庆去了哪里", datetime(2025, 9, 21), datetime(2025, 10, 17)),
    ("春节的时候回老家了吗", datetime(2026, 2, 8), datetime(2026, 3, 4)),  # 春节 2026: 17 February
    ("去年春节", datetime(2025, 1, 20), datetime(2025, 2, 13)),
    ("what did I do last Christmas?", datetime(2025, 12, 16), datetime(2026, 1, 5)),
    ("去年七夕情人节送了什么", datetime(2025, 8, 21), datetime(2025, 9, 8)),  # Qixi (29 August), not February 14
    # seasons only when the question says which one
    ("where did we go last summer?", datetime(2025, 6, 1), datetime(2025, 9, 1)),
    ("the summer of 2023", datetime(2023, 6, 1), datetime(2023, 9, 1)),
    ("What state did Joanna visit in summer 2021?", datetime(2021, 6, 1), datetime(2021, 9, 1)),
    ("去年夏天去哪儿旅游了", datetime(2025, 6, 1), datetime(2025, 9, 1)),
    # parts of a month or a year; a month in Chinese numerals; a month of the year named
    ("去年八月底", datetime(2025, 8, 18), datetime(2025, 9, 3)),
    ("去年十二月初做了什么手术", datetime(2025, 11, 29), datetime(2025, 12, 14)),
    ("上个月底", datetime(2026, 2, 18), datetime(2026, 3, 3)),
    ("这个月初", datetime(2026, 2, 27), datetime(2026, 3, 14)),
    ("early May", datetime(2025, 4, 29), datetime(2025, 5, 14)),
    ("去年年底", datetime(2025, 11, 1), datetime(2026, 1, 1)),
    ("这个月上旬拿了多少年终奖？", datetime(2026, 2, 27), datetime(2026, 3, 14)),  # 年终奖 is a bonus, not the year's end
    ("今年一月拿到年终奖之后做了什么", datetime(2025, 12, 30), datetime(2026, 2, 3)),
    ("三月份", datetime(2026, 2, 27), datetime(2026, 4, 3)),
    ("去年六月", datetime(2025, 5, 30), datetime(2025, 7, 3)),
    ("去年3月", datetime(2025, 2, 27), datetime(2025, 4, 3)),
    # a couple of days ago, last weekend
    ("前两天店里的狗怎么了", datetime(2026, 3, 13), datetime(2026, 3, 21)),  # "a few days": the last week
    ("what did I buy last weekend?", datetime(2026, 3, 13), datetime(2026, 3, 17)),
    # as people mean them: prices are not years, 去年 anchors, the holiday before 'two days'
    # a price or a room number is not a year; 去年 still anchors
    ("去年双十一花了2000多买了什么", datetime(2025, 11, 3), datetime(2025, 11, 21)),
    ("I spent 2000 dollars last Christmas on what?", datetime(2025, 12, 16), datetime(2026, 1, 5)),
    ("2023年5月我在哪工作", datetime(2023, 4, 29), datetime(2023, 6, 3)),
    ("前年六月我们去哪了", datetime(2024, 5, 30), datetime(2024, 7, 3)),
    ("国庆前两天我们在干嘛", datetime(2025, 9, 21), datetime(2025, 10, 17)),  # the holiday, not the last days
    ("去年中国行我们去了哪些城市", datetime(2025, 1, 1), datetime(2026, 1, 1)),  # 去年 + 中国, not 年中
    ("上个夏天去了哪", datetime(2025, 6, 1), datetime(2025, 9, 1)),
    ("十五天前买了什么", datetime(2026, 3, 1, 6), datetime(2026, 3, 9, 18)),
    ("两个星期前", datetime(2026, 3, 2, 12), datetime(2026, 3, 10, 12)),
    ("What did we do on New Year’s Eve?", datetime(2025, 12, 23), datetime(2026, 1, 9)),  # a curly apostrophe
    ("明年春节打算去哪", datetime(2027, 1, 28), datetime(2027, 2, 21)),
    ("what are we doing next christmas?", datetime(2026, 12, 23), datetime(2026, 12, 29)),
    # nights, mornings, weekdays, a year alone
    ("what did I eat last night?", datetime(2026, 3, 19), datetime(2026, 3, 20)),
    ("我昨晚吃了什么", datetime(2026, 3, 19), datetime(2026, 3, 20)),
    ("what did I say this morning?", datetime(2026, 3, 20), datetime(2026, 3, 21)),
    ("大前天去了哪", datetime(2026, 3, 17), datetime(2026, 3, 18)),
    ("几天前买的那本书", datetime(2026, 3, 13), datetime(2026, 3, 21)),
    ("What did I do last Monday?", datetime(2026, 3, 15), datetime(2026, 3, 18)),  # NOW is a Friday
    ("上周三开会说了什么", datetime(2026, 3, 10), datetime(2026, 3, 13)),
    ("what did I do in 2023?", datetime(2023, 1, 1), datetime(2024, 1, 1)),
    ("2023年我换了几次工作", datetime(2023, 1, 1), datetime(2024, 1, 1)),
    ("前年我们去哪旅游了", datetime(2024, 1, 1), datetime(2025, 1, 1)),
    # this day last year; counts with 多 (more than) and 几 / few (two to five); spans up to now; before last; since
    ("去年的今天我在做什么", datetime(2025, 3, 19), datetime(2025, 3, 22)),
    ("一个多月前买的那个", datetime(2026, 1, 18, 4, 48), datetime(2026, 2, 18, 14, 24)),
    ("十多天前去的医院", datetime(2026, 2, 28), datetime(2026, 3, 11)),
    ("几个月前换的工作是哪家？", datetime(2025, 10, 19), datetime(2026, 1, 19, 4, 48)),
    ("a few months ago", datetime(2025, 10, 19), datetime(2026, 1, 19, 4, 48)),
    # "a month ago" may also mean that calendar month: the window covers both readings
    ("a month or so ago", datetime(2026, 1, 29), datetime(2026, 3, 5, 19, 12)),
    ("Which dentist did I see two months ago?", datetime(2025, 12, 29), datetime(2026, 2, 4)),
    ("最近三天吃了什么", datetime(2026, 3, 16), datetime(2026, 3, 21)),
    ("what did I buy in the last 3 days?", datetime(2026, 3, 16), datetime(2026, 3, 21)),
    ("過去一週的步數", datetime(2026, 3, 12), datetime(2026, 3, 21)),
    ("上上周去了哪里", datetime(2026, 2, 28), datetime(2026, 3, 11)),
    ("the week before last", datetime(2026, 2, 28), datetime(2026, 3, 11)),
    ("上上个月的账单", datetime(2025, 12, 29), datetime(2026, 2, 4)),
    ("上上周三开会说了什么", datetime(2026, 3, 3), datetime(2026, 3, 6)),
    ("what changed since January?", datetime(2025, 12, 30), datetime(2026, 3, 21)),
    ("五月以来", datetime(2025, 4, 29), datetime(2026, 3, 21)),
    ("2023年以来", datetime(2023, 1, 1), datetime(2026, 3, 21)),
    ("where was I in the last two weeks of August?", datetime(2025, 7, 30), datetime(2025, 9, 3)),  # August's
    # a reviewer's cases: a nearer time word, a date or a month read by an older pattern still decides
    ("上周说的三月前要交的材料是什么", datetime(2026, 3, 7), datetime(2026, 3, 18)),
    ("what did I buy in the last two weeks before Christmas?", datetime(2025, 12, 16), datetime(2026, 1, 5)),
    ("where did I stay the last three days in May?", datetime(2025, 4, 29), datetime(2025, 6, 3)),
    ("过去的2023年我去了哪些地方", datetime(2023, 1, 1), datetime(2024, 1, 1)),
    ("since 2023, what did I do in May?", datetime(2023, 4, 29), datetime(2023, 6, 3)),
    ("3月起飞的那班飞机是几点", datetime(2026, 2, 27), datetime(2026, 4, 3)),  # 起飞 is no "from March on"
    ("上上周末", datetime(2026, 3, 6), datetime(2026, 3, 10)),
    ("the weekend before last", datetime(2026, 3, 6), datetime(2026, 3, 10)),
    ("上上个月底", datetime(2026, 1, 18), datetime(2026, 2, 3)),
    ("前年的今天", datetime(2024, 3, 19), datetime(2024, 3, 22)),
    ("100多天前", datetime(2025, 9, 1), datetime(2025, 12, 11)),
    # a second read: 几 as "a few", spans without "the", long counts, a month after an age in months
    ("几个月前我搬家了，新地址是？", datetime(2025, 10, 19), datetime(2026, 1, 19, 4, 48)),
    ("最近几天我睡得不好", datetime(2026, 3, 14), datetime(2026, 3, 21)),
    ("in past 3 days", datetime(2026, 3, 16), datetime(2026, 3, 21)),
    ("in the past 3 months at costco", datetime(2025, 12, 9, 16, 19, 12), datetime(2026, 3, 21)),
    ("最近100天我花了多少钱", datetime(2025, 11, 30), datetime(2026, 3, 21)),
    ("宝宝18月大了，六月份打了什么疫苗", datetime(2025, 5, 30), datetime(2025, 7, 3)),
    ("三年前的今天我在哪", datetime(2023, 3, 19), datetime(2023, 3, 22)),
    ("this day two years ago", datetime(2024, 3, 19), datetime(2024, 3, 22)),
    ("五月起码去了三次健身房", datetime(2025, 4, 29), datetime(2025, 6, 3)),  # 起码 (at least) is no "since"
    # one unit up to now, no count: a rolling span ("last month" alone stays the calendar month before this one)
    ("how many plants did I buy in the past month?", datetime(2026, 2, 14, 13, 26, 24), datetime(2026, 3, 21)),
    ("how many parties did I go to in the last month?", datetime(2026, 2, 14, 13, 26, 24), datetime(2026, 3, 21)),
    ("what did I read over the past week?", datetime(2026, 3, 12), datetime(2026, 3, 21)),
    ("where did I travel this past year?", datetime(2025, 2, 11, 12), datetime(2026, 3, 21)),
    ("what did I buy last month?", datetime(2026, 1, 29), datetime(2026, 3, 4)),
    ("what did I cook this past weekend?", datetime(2026, 3, 13), datetime(2026, 3, 17)),
    ("where was I the last week of August?", datetime(2025, 7, 30), datetime(2025, 9, 3)),  # August's, not a span
    # movable holidays on their own dates (calendar_days.py), a week to either side: 元宵 2026 is 3 March, Easter 2025
    # 20 April, Thanksgiving 2025 27 November, Memorial Day 2025 26 May, Mother's Day 2025 11 May
    ("今年元宵节吃汤圆了吗？", datetime(2026, 2, 23), datetime(2026, 3, 13)),
    ("where did we go for Easter last year?", datetime(2025, 4, 10), datetime(2025, 4, 30)),
    ("what did I cook for Thanksgiving?", datetime(2025, 11, 19), datetime(2025, 12, 9)),
    ("How was the weather during Memorial Day weekend last year?", datetime(2025, 5, 16), datetime(2025, 6, 4)),
    ("去年母親節送了媽媽什麼？", datetime(2025, 5, 3), datetime(2025, 5, 21)),
    ("去年雙十節那天我在做什麼？", datetime(2025, 10, 2), datetime(2025, 10, 20)),
    ("跨年夜我们在哪看的烟火？", datetime(2025, 12, 23), datetime(2026, 1, 9)),
    # parts of a relative month, halves and quarters of a year, Cantonese days, a month with last / this, ranges
    ("which bills did I pay at the end of last month?", datetime(2026, 2, 18), datetime(2026, 3, 3)),
    ("what did I weigh at the start of this month?", datetime(2026, 2, 27), datetime(2026, 3, 14)),
    ("上半年我一共出差几次？", datetime(2026, 1, 1), datetime(2026, 7, 1)),
    ("去年下半年的奖金是多少", datetime(2025, 7, 1), datetime(2026, 1, 1)),
    ("上个季度的信用卡账单", datetime(2025, 9, 28), datetime(2026, 1, 4)),
    ("What happened at work in Q3 last year?", datetime(2025, 7, 1), datetime(2025, 10, 1)),
    ("琴日我喺邊度食晏？", datetime(2026, 3, 19), datetime(2026, 3, 20)),
    ("今日吃了什么", datetime(2026, 3, 20), datetime(2026, 3, 21)),
    ("Last October, did we throw Grandma a party?", datetime(2025, 9, 29), datetime(2025, 11, 3)),
    ("Where did I go on vacation last May?", datetime(2025, 4, 29), datetime(2025, 6, 3)),
    ("今年3月到5月之间我去了几次医院？", datetime(2026, 2, 27), datetime(2026, 6, 3)),
    ("What were my readings between March 3 and March 9?", datetime(2026, 3, 1), datetime(2026, 3, 12)),
    ("What was my weight on 12/31/2025?", datetime(2025, 12, 29), datetime(2026, 1, 3)),
    ("How much was my paycheck on the 15th?", datetime(2026, 3, 13), datetime(2026, 3, 18)),
    ("民國112年我去了哪些國家？", datetime(2023, 1, 1), datetime(2024, 1, 1)),
    # a weekday a past-tense question names is the latest one (a Tuesday: 17 March)
    ("Did I go to the gym on Tuesday?", datetime(2026, 3, 16), datetime(2026, 3, 19)),
    # day ranges in Chinese and across New Year, the week of a date (Monday to Sunday), a weekday of this week,
    # the weekday two weeks back, fixed-date days, a holiday N years ago (that year's), "since" a holiday
    ("7月5号到7月12号之间我去游了几次泳？", datetime(2025, 7, 3), datetime(2025, 7, 15)),
    ("2025年12月28日至1月3日去了哪", datetime(2025, 12, 26), datetime(2026, 1, 6)),
    ("from Dec 28 to Jan 3", datetime(2025, 12, 26), datetime(2026, 1, 6)),
    ("What were my step counts the week of March 2?", datetime(2026, 2, 28), datetime(2026, 3, 11)),
    ("3月2号那周跑了几次步", datetime(2026, 2, 28), datetime(2026, 3, 11)),
    ("这周三吃了什么", datetime(2026, 3, 17), datetime(2026, 3, 20)),
    ("what did I eat this Wednesday?", datetime(2026, 3, 17), datetime(2026, 3, 20)),
    ("what did I do this weekend?", datetime(2026, 3, 13), datetime(2026, 3, 17)),  # asked on Friday: the last one
    ("Where did we hike two Sundays ago?", datetime(2026, 3, 7), datetime(2026, 3, 10)),
    ("What did I buy the Saturday before last?", datetime(2026, 3, 6), datetime(2026, 3, 9)),
    ("教师节送了老师什么", datetime(2025, 9, 3), datetime(2025, 9, 18)),
    ("六一给孩子买了什么", datetime(2025, 5, 24), datetime(2025, 6, 10)),
    ("双十二买了什么", datetime(2025, 12, 4), datetime(2025, 12, 21)),
    ("What did we do on Christmas Eve two years ago?", datetime(2024, 12, 17), datetime(2025, 1, 1)),
    ("两年前的国庆去了哪", datetime(2024, 9, 21), datetime(2024, 10, 17)),
    ("what happened in May two years ago?", datetime(2024, 4, 29), datetime(2024, 6, 3)),
    ("Since New Year's, how many days have I meditated?", datetime(2025, 12, 30), datetime(2026, 3, 21)),
    # "back" as "ago", weekends back, hours and fortnights, a weekday with a part of the day or in a past-tense
    # Chinese question, more fixed days, dates without separators or a year, two-digit years, days of this month,
    # "the start of the month", "Jan-Mar", 从一月份到现在
    ("A couple of weeks back I mentioned a podcast, which one?", datetime(2026, 3, 2, 12), datetime(2026, 3, 10, 12)),
    ("what did I do two weekends ago", datetime(2026, 3, 6), datetime(2026, 3, 10)),
    ("anything in the last 48 hrs about the outage?", datetime(2026, 3, 17), datetime(2026, 3, 21)),
    ("what did I tell my therapist over the past fortnight?", datetime(2026, 3, 4, 14, 24), datetime(2026, 3, 21)),
    ("what was the bar we went to friday night", datetime(2026, 3, 12), datetime(2026, 3, 15)),
    ("周二开会的时候老板说了什么", datetime(2026, 3, 16), datetime(2026, 3, 19)),
    ("Who came round on Boxing Day?", datetime(2025, 12, 19), datetime(2026, 1, 3)),
    ("where did we go on the august bank holiday", datetime(2025, 8, 16), datetime(2025, 9, 2)),
    ("where did we go for st paddy's", datetime(2026, 3, 10), datetime(2026, 3, 25)),
    ("What did I eat over the holidays?", datetime(2025, 12, 16), datetime(2026, 1, 5)),
    ("520那天我送了啥", datetime(2025, 5, 13), datetime(2025, 5, 28)),
    ("3.15那天我投诉的那家店叫啥", datetime(2026, 3, 13), datetime(2026, 3, 18)),
    ("七一嗰日我哋去咗邊度睇煙花？", datetime(2025, 6, 24), datetime(2025, 7, 9)),
    ("20250915 那天的会议纪要", datetime(2025, 9, 13), datetime(2025, 9, 18)),
    ("i had a call with the landlord on 5/12, what did we agree on?", datetime(2025, 5, 10), datetime(2025, 5, 15)),
    ("21年国庆七天我都干了啥", datetime(2021, 9, 21), datetime(2021, 10, 17)),
    ("23年5月我去了趟成都", datetime(2023, 4, 29), datetime(2023, 6, 3)),
    ("how much did we spend in summer '22?", datetime(2022, 6, 1), datetime(2022, 9, 1)),
    ("What happened the week of the 15th?", datetime(2026, 3, 7), datetime(2026, 3, 18)),
    ("What did I log from the 3rd to the 7th?", datetime(2026, 3, 1), datetime(2026, 3, 10)),
    ("What was my weight at the start of the month?", datetime(2026, 2, 27), datetime(2026, 3, 14)),
    ("What did I discuss with Priya in Jan-Mar?", datetime(2025, 12, 30), datetime(2026, 4, 3)),
    ("从一月份到现在我一共跑了多少公里", datetime(2025, 12, 30), datetime(2026, 3, 21)),
    # lunar days from 春节's date (腊八 2026: 26 January; 重阳 2025: 29 October), UK and Australian days, "late 2022",
    # 2022/10/3, 1/15那天, Cantonese 前日, a two-digit year before 双十一; "last Monday" said on the Friday after it
    ("腊八那天煮粥放了哪些料", datetime(2026, 1, 18), datetime(2026, 2, 4)),
    ("重陽節去拜山用了多少錢？", datetime(2025, 10, 22), datetime(2025, 11, 7)),
    ("正月里我去了几趟医院？", datetime(2026, 2, 10), datetime(2026, 3, 26)),
    ("Did I remember to ring Mum on Mothering Sunday?", datetime(2026, 3, 7), datetime(2026, 3, 24)),
    ("Which contractors did I get quotes from in late 2022?", datetime(2022, 11, 1), datetime(2023, 1, 1)),
    ("帮我找一下2022/10/3那天的日记", datetime(2022, 10, 1), datetime(2022, 10, 6)),
    ("1/15那天我是去哪間診所看診？", datetime(2026, 1, 13), datetime(2026, 1, 18)),
    ("前日同醫生講咗啲咩？", datetime(2026, 3, 18), datetime(2026, 3, 19)),
    ("23年双十一我都买了些什么？", datetime(2023, 11, 3), datetime(2023, 11, 21)),
    ("what did I do last Wednesday?", datetime(2026, 3, 10), datetime(2026, 3, 20)),
    # school terms: autumn late August to January, spring January to June; 上学期 / "last semester" the latest ended
    ("上学期孩子期末成绩我记了没有", datetime(2025, 8, 20), datetime(2026, 1, 21)),
    ("这学期他请了几次假", datetime(2026, 1, 10), datetime(2026, 3, 21)),
    ("What classes was I taking last fall semester?", datetime(2025, 8, 20), datetime(2026, 1, 21)),
])
def test_windows(question, start, end):
    assert time_window(question, NOW) == (start, end)


@pytest.mark.parametrize("question", [
    "我同事张国庆喜欢喝什么", "年终奖发了多少", "五一路那家店几点关门", "六一路的药店开门了吗", "今日头条上看到的新闻",
    # a taste names no holiday unless it says which one; a weekday in a present-tense question is a habit
    "Which mooncake flavour do I like for Mid-Autumn?", "我最爱的圣诞歌是哪首", "Is the gym open on Tuesday?",
    "What do I do on Tuesdays?", "Is my dentist on the 3rd floor?", "Did the doctor say this may help my knee?", "他一五一十地告诉我了吗", "我喜欢什么馅的元宵", "统一月饼好吃吗",
    "How late may I check out?", "我们每年过年都去哪", "what do we usually do for christmas?",
    "我需要提前两天预订吗", "马上周末了，去哪玩", "晚上周围吵不吵",
    # a weekday alone is a habit far more often than a date in the sets we have (周五晚上能 ping 她吗, "on Sunday
    # afternoons"); 将近两年 is a length; 三月前 is "before March"
    "她周日晚上一般做什么", "Why can't we reach her on Sunday afternoons?", "他将近两年没回家", "三月前要交的材料",
    # "last" as a verb or "my last", 几近 (nearly), 三年级 (third grade), 几 asking how long ago
    "does the Kindle battery last two weeks?", "my last two years at Google", "他几近一年没回家", "最近三年级的数学课",
    "你几年前去的日本？", "我是几个月前换的工作？", "my past two years at Google", "十三月", "第十一月",
    # a place, a title, a length, a price, a habit, a plan
    "Who recommended the Christmas Island diving trip?", "《去年煙花特別多》是誰唱的？", "我工作了21年了",
    "price is 3.15 元", "每周三去游泳了吗", "Friday night plans?", "前阵子朋友推荐的那部电视剧叫什么？",
    "A while ago I saved a pasta recipe, can you find it?",
    "腊八粥怎么做", "小年轻都喜欢什么", "Is there anything later this month I shouldn't forget?", "version 2023.1.2.5",
    "1/2 cup of sugar", "Is my term life insurance still active?", "周子轩大一上学期期末考得怎么样？",
])
def test_names_streets_habits_and_idioms_name_no_time(question):
    assert time_window(question, NOW) is None


def test_this_weekend_asked_on_it_and_days_still_to_come():
    sunday = datetime(2026, 3, 22, 10)
    assert time_window("What did I get up to this weekend?", sunday) == (datetime(2026, 3, 20), datetime(2026, 3, 23))
    # still to come on Friday the 20th: nothing was observed then
    for question in ("what are we doing this weekend?", "What plans did I jot down for this weekend?",
                     "这周六的聚会在哪里？", "Where is the party this Saturday?", "这个周末约了谁吃饭来着"):
        assert time_window(question, NOW) is None, question


def test_a_holiday_still_to_come_is_the_coming_one_unless_the_question_is_about_the_past():
    december_10, december_20 = datetime(2025, 12, 10, 9), datetime(2025, 12, 20, 9)
    assert time_window("What's on the schedule for Christmas Day?", december_10) is None  # not last year's
    assert time_window("国庆假期我打算去哪儿玩来着？", datetime(2024, 9, 10)) is None
    # a week before it, plans are being written: the coming one with its slack
    assert time_window("What's on the schedule for Christmas Day?", december_20) == (datetime(2025, 12, 16),
                                                                                     datetime(2026, 1, 5))
    # what happened: the latest one that has begun
    assert time_window("What did we cook for Christmas?", december_10) == (datetime(2024, 12, 16), datetime(2025, 1, 5))
    assert time_window("国庆去了哪里？", datetime(2024, 9, 10)) == (datetime(2023, 9, 21), datetime(2023, 10, 17))


@pytest.mark.parametrize("question", ["我之前天天喝什么咖啡", "以前天天跑步吗", "What projects is she planning for next year?"])
def test_before_is_not_the_day_before_yesterday(question):
    assert time_window(question, NOW) is None


def test_the_middle_of_a_month_is_not_a_prize():
    assert time_window("我上个月中奖了多少钱", NOW) == time_window("我上个月买了什么", NOW)  # all of last month
    assert time_window("上个月中的时候", NOW) == (datetime(2026, 2, 8), datetime(2026, 2, 24))


def test_an_aware_clock_reads_as_its_wall_time():
    aware = NOW.replace(tzinfo=timezone.utc)
    assert time_window("what did I do last christmas?", aware) == time_window("what did I do last christmas?", NOW)


@pytest.mark.parametrize("question", ["which package manager?", "3个月的计划", "version 5.2 of the api",
                                      "99999999999 years ago", "the month of", "12345678901234567890 days ago",
                                      "in smay", "", "what are her plans for the summer?", "夏天他最馋什么",
                                      "五月天演唱会的票多少钱", "how is she in the winter?"])
def test_no_window(question):
    assert time_window(question, NOW) is None


@given(st.text(max_size=80))
@settings(max_examples=300, deadline=None)
def test_any_text_gives_a_window_or_none_never_an_error(question):
    window = time_window(question, NOW)
    assert window is None or window[0] < window[1]
    wants_current(question)


def test_current_state_cues():
    assert wants_current("what is my current job?") and wants_current("你现在住哪里") and wants_current("Latest plan?")
    assert not wants_current("what did I do in May?") and not wants_current("项目用什么包管理器")
    assert wants_current("家裡現在用的除濕機是哪個牌子？") and wants_current("她還在學鋼琴嗎")  # traditional characters


@pytest.mark.parametrize("question", [
    "When did Caroline go to the support group?", "when is the follow-up?",
    "How long is a shift, and when does it hand over?",
    "Whose work is she covering, and until when?", "By when is the draft due?", "What year did John start surfing?",
    "Which day is trash collected?", "What time does the batch kick off?", "How long ago did I buy the bike?",
    "越剧票是哪天的？", "她什麼時候去跳廣場舞？", "店里晚上营业到几点？", "阿哲的生日是几月几号？", "你哪一年毕业的？"])
def test_questions_asking_when(question):
    assert asks_when(question)


@pytest.mark.parametrize("question", [
    "What did she say when he left?", "How does Calvin stay motivated when faced with setbacks?",
    "What time management techniques do they use?", "Where does Mei work?", "上个月我们去哪儿吃饭了？", "几个人去了？"])
def test_questions_not_asking_when(question):
    assert not asks_when(question)


def test_which_texts_state_a_time(tmp_path):
    states = ["I went there yesterday", "Melanie: I painted it last year", "We met on Sunday", "the 7:40 bus",
              "we moved in 2021", "back in January", "two weeks ago", "店里营业到凌晨一点", "三月底上户", "每月 6 號扣款",
              "上週去了台北", "下个月搬家", "周六上午上课", "三天前感冒了", "最近在学钢琴"]
    silent = ["I may go", "We march on", "好一点了", "我喜欢猫", "The office coffee machine is on the third floor",
              "她有点累", "Mondayish vibes", ""]
    with echo_duck.open(tmp_path / "m.duckdb", embedder="hash", admin=True) as mem:
        got = dict(mem.sql("SELECT t, states_time(t) FROM (SELECT unnest($texts::VARCHAR[]) AS t)",
                           {"texts": states + silent}).rows())
    assert [t for t in states if not got[t]] == [] and [t for t in silent if got[t]] == []


def _texts() -> list[str]:
    texts = ["", "hello", "项目使用 pnpm 9 管理依赖，锁文件是 pnpm-lock.yaml", "The project uses pnpm 用户",
             "Ｐｎｐｍ 中", "日本語のテキスト", "한국어 텍스트", "ab 中", "abcdefgh 中", "abcdefghi 中", "𠀀𠀁 astral han",
             "emoji 🙂 only", "Ünïcödé 文字", "\u3400\u4dbf\u9fff\uf900\ufaff", "\u3007 ideographic zero"]
    for name in ("bilingual", "zh_daily"):
        texts += [json.loads(line)["text"] for line in (SETS / name / "memories.jsonl").read_text("utf-8").splitlines()]
    return texts


def test_python_and_sql_scripts_agree(tmp_path):
    texts = _texts()
    with echo_duck.open(tmp_path / "m.duckdb", embedder="hash", admin=True) as mem:
        got = mem.sql("SELECT t, content_script(t) AS s FROM (SELECT unnest($texts::VARCHAR[]) AS t)",
                      {"texts": texts}).rows()
    assert len(got) == len(texts)
    assert all(text_script(t) == s for t, s in got), [t for t, s in got if text_script(t) != s]
    assert {s for _, s in got} == {0, 1}


@pytest.mark.slow
@given(st.lists(st.text(alphabet=st.sampled_from("ab Z中文字\u3400\uf900ｱ1 "), max_size=30), min_size=1, max_size=40))
@settings(max_examples=20, deadline=None)
def test_python_and_sql_scripts_agree_on_generated_text(texts):
    with echo_duck.open(":memory:", embedder="hash", admin=True) as mem:
        got = mem.sql("SELECT content_script(t) FROM (SELECT unnest($texts::VARCHAR[]) AS t, "
                      "generate_subscripts($texts::VARCHAR[], 1) AS i) ORDER BY i", {"texts": texts}).rows()
    assert [s for (s,) in got] == [text_script(t) for t in texts]


def test_a_half_or_a_quarter_asked_in_its_first_month_is_the_one_before():
    january = datetime(2026, 1, 28, 13)
    assert time_window("许婷上半年评上先进，拿了多少奖励？", january) == (datetime(2025, 1, 1), datetime(2025, 7, 1))
    assert time_window("上半年我一共出差几次？", datetime(2024, 5, 15)) == (datetime(2024, 1, 1), datetime(2024, 7, 1))
    assert time_window("what did we ship in the third quarter?", datetime(2025, 7, 10)) == (
        datetime(2024, 7, 1), datetime(2024, 10, 1))
