path = '/etc/cron.d/job'
