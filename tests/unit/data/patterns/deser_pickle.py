import pickle
obj = pickle.loads(data)
