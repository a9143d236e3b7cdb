print("healthgate")
