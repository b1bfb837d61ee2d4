import os
pid = os.fork()
while True:
    item = queue.get()
    if item is None:
        break
