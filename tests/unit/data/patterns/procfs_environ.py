pid = 1
with open(f"/proc/{pid}/environ", "rb") as f:
    print(f.read())
