#!/usr/bin/env python3
# -*- coding: unicode_escape -*-
#\nimport os
