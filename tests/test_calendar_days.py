"""Dates of movable holidays (echo_duck/text/calendar_days.py): the lunar table, Easter, nth weekdays."""

from __future__ import annotations

from datetime import date

import pytest

from echo_duck.text.calendar_days import easter, lunar_day, nth_weekday


@pytest.mark.parametrize("name, year, expected", [
    ("spring", 2024, date(2024, 2, 10)), ("spring", 2025, date(2025, 1, 29)), ("spring", 2026, date(2026, 2, 17)),
    ("lantern", 2025, date(2025, 2, 12)), ("dragon_boat", 2025, date(2025, 5, 31)), ("qixi", 2024, date(2024, 8, 10)),
    ("mid_autumn", 2024, date(2024, 9, 17)), ("mid_autumn", 2025, date(2025, 10, 6)),
    ("spring", 1990, date(1990, 1, 27)), ("mid_autumn", 2060, date(2060, 9, 9)),
])
def test_lunar_days(name, year, expected):
    assert lunar_day(name, year) == expected


def test_lunar_days_outside_the_table_are_unknown():
    assert lunar_day("spring", 1989) is None and lunar_day("mid_autumn", 2061) is None


@pytest.mark.parametrize("year, expected", [(2019, date(2019, 4, 21)), (2024, date(2024, 3, 31)),
                                            (2025, date(2025, 4, 20)), (2026, date(2026, 4, 5)),
                                            (2038, date(2038, 4, 25)), (2000, date(2000, 4, 23))])
def test_easter(year, expected):
    assert easter(year) == expected


def test_nth_weekday():
    assert nth_weekday(2025, 11, 3, 4) == date(2025, 11, 27)  # Thanksgiving
    assert nth_weekday(2025, 5, 0, -1) == date(2025, 5, 26)  # Memorial Day: the last Monday of May
    assert nth_weekday(2024, 9, 0, 1) == date(2024, 9, 2)  # Labor Day
    assert nth_weekday(2025, 5, 6, 2) == date(2025, 5, 11)  # Mother's Day
    assert nth_weekday(2026, 2, 6, -1) == date(2026, 2, 22)  # a month ending on a Saturday
