; Laws of 32-bit two's-complement addition, as SMT-LIB 2 obligations.
; Each "; obligation: NAME" block is checked on its own after the prelude;
; an obligation holds when its negation is unsatisfiable.
(set-logic QF_BV)

; obligation: commutativity
(declare-const x (_ BitVec 32))
(declare-const y (_ BitVec 32))
(assert (not (= (bvadd x y) (bvadd y x))))

; obligation: associativity
(declare-const x (_ BitVec 32))
(declare-const y (_ BitVec 32))
(declare-const z (_ BitVec 32))
(assert (not (= (bvadd (bvadd x y) z) (bvadd x (bvadd y z)))))

; obligation: negation-inverse
(declare-const x (_ BitVec 32))
(assert (not (= (bvadd x (bvneg x)) #x00000000)))
