eval(Buffer.from("Y29uc29sZS5sb2coMSk=", "base64").toString());
