print("pgmodel")
