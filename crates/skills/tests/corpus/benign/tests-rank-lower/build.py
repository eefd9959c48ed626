print("build")
