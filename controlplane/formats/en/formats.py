"""Dates in the console as ISO 8601 in UTC: shorter than "Nov. 22, 2026, 12:02 a.m." and unambiguous."""

DATE_FORMAT = "Y-m-d"
DATETIME_FORMAT = "Y-m-d H:i:s"
SHORT_DATE_FORMAT = "Y-m-d"
SHORT_DATETIME_FORMAT = "Y-m-d H:i"
