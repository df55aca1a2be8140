// Test runs are quiet unless asked otherwise.
process.env.PLUMB_LOG_LEVEL ??= 'silent';
