# -*- coding: utf-8 -*-
print('unicode_escape is a codec')

# coding: rot13 (on line 4, which Python ignores)
