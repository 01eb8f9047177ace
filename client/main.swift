print("lockstep-client")
