"""UTC calendar arithmetic on epoch seconds, without the datetime module
(the pure packages read no clock): day numbers, civil dates, and DynamoDB's
spoken form of a moment."""

from __future__ import annotations

SECONDS_PER_DAY = 86_400
WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
MONTHS = (
    "January", "February", "March", "April", "May", "June",
    "July", "August", "September", "October", "November", "December",
)  # fmt: skip


def utc_day(moment: float) -> int:
    """Days since 1970-01-01 (UTC) of an epoch time: calendar arithmetic without
    the datetime module, which the pure packages keep out (no clock here)."""
    return int(moment // SECONDS_PER_DAY)


def civil_date(day: int) -> tuple[int, int, int]:
    """(year, month, day) of a day number (H. Hinnant's days-to-civil algorithm)."""
    shifted = day + 719_468
    era = shifted // 146_097
    day_of_era = shifted - era * 146_097
    year_of_era = (
        day_of_era - day_of_era // 1460 + day_of_era // 36_524 - day_of_era // 146_096
    ) // 365
    day_of_year = day_of_era - (365 * year_of_era + year_of_era // 4 - year_of_era // 100)
    month_index = (5 * day_of_year + 2) // 153
    month = month_index + 3 if month_index < 10 else month_index - 9
    year = year_of_era + era * 400 + (1 if month <= 2 else 0)
    return year, month, day_of_year - (153 * month_index + 2) // 5 + 1


def same_utc_day(first: float, second: float) -> bool:
    return utc_day(first) == utc_day(second)


def spoken_time(moment: float) -> str:
    """DynamoDB's human form: 'Friday, October 9, 2026 at 1:21:34 AM Coordinated Universal Time'."""
    day = utc_day(moment)
    year, month, day_of_month = civil_date(day)
    seconds = int(moment - day * SECONDS_PER_DAY)
    hour, minute, second = seconds // 3600, seconds // 60 % 60, seconds % 60
    weekday = WEEKDAYS[(day + 3) % 7]  # 1970-01-01 was a Thursday
    meridiem = "AM" if hour < 12 else "PM"
    return (
        f"{weekday}, {MONTHS[month - 1]} {day_of_month}, {year} at "
        f"{hour % 12 or 12}:{minute:02}:{second:02} {meridiem} Coordinated Universal Time"
    )
