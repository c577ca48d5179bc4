//! `Retry-After` (RFC 9110, 10.2.3): delta-seconds, or an HTTP-date turned into a delay from
//! now. Std only: the three HTTP-date forms a recipient must accept (IMF-fixdate, RFC 850,
//! asctime) are parsed here.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The delay a `Retry-After` value asks for, seen from `now`. A date already past is a zero
/// delay. `None` for anything unparseable (negative or fractional seconds, a malformed or
/// impossible date, a number too large).
pub(crate) fn parse_retry_after(value: &str, now: SystemTime) -> Option<Duration> {
    let value = value.trim();
    if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) {
        return value.parse::<u64>().ok().map(Duration::from_secs);
    }
    let at = parse_http_date(value)?;
    Some(at.duration_since(now).unwrap_or(Duration::ZERO))
}

const SHORT_DAYS: [&str; 7] = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"];
const LONG_DAYS: [&str; 7] = [
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
    "Sunday",
];
const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];

/// `Sun, 06 Nov 1994 08:49:37 GMT`, `Sunday, 06-Nov-94 08:49:37 GMT` or
/// `Sun Nov  6 08:49:37 1994`. The weekday name is checked for form, not against the date.
fn parse_http_date(value: &str) -> Option<SystemTime> {
    let parts: Vec<&str> = value.split_ascii_whitespace().collect();
    let (year, month, day, time) = match parts.as_slice() {
        // IMF-fixdate
        [weekday, day, month, year, time, "GMT"]
            if SHORT_DAYS.contains(&weekday.strip_suffix(',')?) =>
        {
            (
                number(year, 4, 4)?,
                month_number(month)?,
                number(day, 2, 2)?,
                *time,
            )
        }
        // RFC 850, two-digit year
        [weekday, date, time, "GMT"] if LONG_DAYS.contains(&weekday.strip_suffix(',')?) => {
            let mut fields = date.split('-');
            let (day, month, year) = (fields.next()?, fields.next()?, fields.next()?);
            if fields.next().is_some() {
                return None;
            }
            let year = number(year, 2, 2)?;
            // RFC 9110: a two-digit year more than 50 years ahead is in the past century;
            // reading 70..=99 as 19xx and 00..=69 as 20xx does that until 2049.
            let year = if year >= 70 { 1900 + year } else { 2000 + year };
            (year, month_number(month)?, number(day, 2, 2)?, *time)
        }
        // asctime
        [weekday, month, day, time, year] if SHORT_DAYS.contains(weekday) => (
            number(year, 4, 4)?,
            month_number(month)?,
            number(day, 1, 2)?,
            *time,
        ),
        _ => return None,
    };
    let mut clock = time.split(':');
    let (hour, minute, second) = (clock.next()?, clock.next()?, clock.next()?);
    if clock.next().is_some() {
        return None;
    }
    let (hour, minute, second) = (
        number(hour, 2, 2)?,
        number(minute, 2, 2)?,
        number(second, 2, 2)?,
    );
    // 60 allows a leap second.
    if hour > 23 || minute > 59 || second > 60 || day == 0 || day > days_in_month(year, month) {
        return None;
    }
    let days = days_from_civil(year, month, day);
    let seconds = days * 86_400 + i64::from(hour * 3600 + minute * 60 + second);
    Some(UNIX_EPOCH + Duration::from_secs(u64::try_from(seconds).ok()?))
}

/// A run of `min..=max` ASCII digits.
fn number(text: &str, min: usize, max: usize) -> Option<u32> {
    if text.len() < min || text.len() > max || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}

fn month_number(name: &str) -> Option<u32> {
    let index = MONTHS.iter().position(|m| *m == name)?;
    u32::try_from(index + 1).ok()
}

fn days_in_month(year: u32, month: u32) -> u32 {
    match month {
        2 if year.is_multiple_of(4) && (!year.is_multiple_of(100) || year.is_multiple_of(400)) => {
            29
        }
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's `days_from_civil`).
fn days_from_civil(year: u32, month: u32, day: u32) -> i64 {
    let (month, day) = (i64::from(month), i64::from(day));
    let year = i64::from(year) - i64::from(month <= 2);
    let era = year.div_euclid(400);
    let year_of_era = year - era * 400;
    let day_of_year = (153 * (if month > 2 { month - 3 } else { month + 9 }) + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 1994-11-06T08:49:37Z, the RFC's example date.
    const EXAMPLE: u64 = 784_111_777;

    fn at(seconds: u64) -> SystemTime {
        UNIX_EPOCH + Duration::from_secs(seconds)
    }

    #[test]
    fn delta_seconds_are_read() {
        let now = at(EXAMPLE);
        assert_eq!(parse_retry_after("7", now), Some(Duration::from_secs(7)));
        assert_eq!(
            parse_retry_after(" 120 ", now),
            Some(Duration::from_secs(120))
        );
        assert_eq!(parse_retry_after("0", now), Some(Duration::ZERO));
    }

    #[test]
    fn the_three_date_forms_become_a_delay_from_now() {
        let now = at(EXAMPLE - 60);
        for value in [
            "Sun, 06 Nov 1994 08:49:37 GMT",
            "Sunday, 06-Nov-94 08:49:37 GMT",
            "Sun Nov  6 08:49:37 1994",
        ] {
            assert_eq!(
                parse_retry_after(value, now),
                Some(Duration::from_secs(60)),
                "{value}"
            );
        }
    }

    #[test]
    fn dates_are_converted_exactly() {
        let cases: &[(&str, u64)] = &[
            ("Thu, 01 Jan 1970 00:00:00 GMT", 0),
            ("Sun, 06 Nov 1994 08:49:37 GMT", EXAMPLE),
            ("Tue, 29 Feb 2000 12:00:00 GMT", 951_825_600),
            ("Sat, 01 Jan 2022 00:00:00 GMT", 1_640_995_200),
            ("Fri, 31 Dec 2049 23:59:59 GMT", 2_524_607_999),
            ("Tuesday, 01-Jan-30 00:00:00 GMT", 1_893_456_000),
        ];
        for (value, seconds) in cases {
            assert_eq!(parse_http_date(value), Some(at(*seconds)), "{value}");
        }
    }

    #[test]
    fn a_past_date_is_a_zero_delay() {
        let now = at(EXAMPLE + 3600);
        assert_eq!(
            parse_retry_after("Sun, 06 Nov 1994 08:49:37 GMT", now),
            Some(Duration::ZERO)
        );
    }

    #[test]
    fn garbage_is_none() {
        let now = at(EXAMPLE);
        for value in [
            "",
            "   ",
            "-1",
            "+7",
            "1.5",
            "7s",
            "soon",
            "99999999999999999999999",
            "Sun, 06 Nov 1994 08:49:37",
            "Sun, 06 Nov 1994 08:49:37 UTC",
            "Sun, 6 Nov 1994 08:49:37 GMT",
            "Sun, 06 Foo 1994 08:49:37 GMT",
            "Sun, 31 Nov 1994 08:49:37 GMT",
            "Sun, 29 Feb 1900 08:49:37 GMT",
            "Sun, 06 Nov 1994 24:00:00 GMT",
            "Sun, 06 Nov 1994 08:60:00 GMT",
            "Sun, 06 Nov 1994 08:49 GMT",
            "Sun, 06 Nov 1994 08:49:37:00 GMT",
            "Sun, 06 Nov 94 08:49:37 GMT",
            "Xyz, 06 Nov 1994 08:49:37 GMT",
            "Sun 06 Nov 1994 08:49:37 GMT",
            "Sunday, 06-Nov-1994 08:49:37 GMT",
            "Sunday, 06-Nov-94-1 08:49:37 GMT",
            "Sun Nov 06 08:49:37 94",
            "Wed, 31 Dec 1969 23:59:59 GMT",
        ] {
            assert_eq!(parse_retry_after(value, now), None, "{value:?}");
        }
    }
}
