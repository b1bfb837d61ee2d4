import yaml
conf = yaml.load(open('c.yaml'))
