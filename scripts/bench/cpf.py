"""A valid CPF (check digits per Receita Federal), its nine base digits drawn from `rng`: the one
definition the data generators share (gen_data.py, gen_import.py, gen_scale.py)."""


def cpf(rng):
    while True:
        d = [rng.randrange(10) for _ in range(9)]
        # a repeated digit (111.111.111-11) is rejected by the service as a CPF
        if len(set(d)) > 1:
            break
    for n in (9, 10):
        d.append(sum(x * w for x, w in zip(d, range(n + 1, 1, -1))) * 10 % 11 % 10)
    return "".join(map(str, d))
