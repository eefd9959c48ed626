const f = String.fromCharCode(101)+String.fromCharCode(118)+String.fromCharCode(97);
