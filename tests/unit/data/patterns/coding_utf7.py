# coding=utf-7
print(1)
