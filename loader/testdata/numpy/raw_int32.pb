Bint32J‹Jåq©A •j&/¼Í¯ebù
_V“F