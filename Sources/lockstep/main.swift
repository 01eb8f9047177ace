print("lockstep")
