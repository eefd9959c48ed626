const vm = require("vm");
vm.runInThisContext(Buffer.from(process.argv[2], "base64").toString());
