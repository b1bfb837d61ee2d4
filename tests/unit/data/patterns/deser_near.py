import json, pickle, yaml
obj = json.loads(s)
blob = pickle.dumps(obj)
conf = yaml.load(f, Loader=yaml.SafeLoader)
c2 = yaml.safe_load(f)
