# Moments as the rest of the app shows them: ISO dates, 24-hour UTC times (the admin's
# audit trail too, instead of English's "Dec. 2, 2026, 2:02 p.m.").
DATETIME_FORMAT = "Y-m-d H:i:s"
SHORT_DATETIME_FORMAT = "Y-m-d H:i"
DATE_FORMAT = "Y-m-d"
TIME_FORMAT = "H:i:s"
