"""MBBQ (Neplenbroek, Bisazza, Fernández, COLM 2024): BBQ in English, Spanish, Dutch and Turkish, with its control set."""
