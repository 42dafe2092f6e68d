import { FreeObjectProperty } from '../../common/openapi/api-docs';
import { ApiProperty } from '@nestjs/swagger';

class CallbackAttempt {
  @ApiProperty({ example: 1 }) attempt: number;
  @ApiProperty({ format: 'date-time' }) attempted_at: string;
  @ApiProperty({ type: Number, nullable: true, example: 200, description: 'null when no HTTP answer came' }) http_status: number | null;
  @ApiProperty({ example: 84 }) latency_ms: number;
  @ApiProperty({ type: String, nullable: true, example: null }) error: string | null;
  @ApiProperty({ example: false, description: 'true for an attempt asked for with POST /v1/callbacks/{event_id}/replay' }) replay: boolean;
}

class CallbackDelivery {
  @ApiProperty({ format: 'uuid', description: 'the event id, the same on every attempt' }) event_id: string;
  @ApiProperty({ example: 'successful_payment' }) event: string;
  @ApiProperty({ example: 'https://merchant.example.com/callbacks/payments' }) url: string;
  @ApiProperty({ enum: ['PENDING', 'DELIVERED', 'FAILED'], example: 'DELIVERED' }) status: string;
  @ApiProperty({ example: 1 }) attempts: number;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) next_attempt_at: string | null;
  @FreeObjectProperty({ nullable: true, description: "the receiver's acknowledgement body, when it sent one" })
  acknowledgement: unknown;
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) completed_at: string | null;
  @ApiProperty({ type: [CallbackAttempt] }) attempt_log: CallbackAttempt[];
}

/** The delivery log of the callbacks about one reference. */
export class CallbackLog {
  @ApiProperty({ example: 'ORDER-42' }) reference: string;
  @ApiProperty({ type: [CallbackDelivery] }) deliveries: CallbackDelivery[];
}

/** A replay asked for: the callback is sent again, once, with the same event id and body. */
export class CallbackReplay {
  @ApiProperty({ format: 'uuid' }) event_id: string;
  @ApiProperty({ format: 'date-time', description: 'when the replay was first asked for; repeated asks before it is sent share it' })
  replay_requested_at: string;
  @ApiProperty({ enum: ['QUEUED'], example: 'QUEUED' }) status: string;
}
