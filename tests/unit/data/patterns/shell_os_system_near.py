import my_os

result = my_os.systematic(3)
print(os.path.exists('x'))
