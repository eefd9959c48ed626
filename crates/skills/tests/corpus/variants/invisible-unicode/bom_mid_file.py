name = "abc"
secret﻿ = 1
