settings = {"exec_approvals": False}
