POOL = 'stratum+tcp://pool.example.net:3333'
